// Videos and cameras in the studio as a user meets them: a video opens with its timeline; stepping,
// scrubbing and the first/last frame keys land on the frame asked for; playback shows every frame in
// order, no faster than the file's own rate, and stops at the end or loops; with a model, each frame is
// shown together with its own results; the test-pattern camera streams with frame rate, latency and
// dropped frames in the status bar; a file that is not a video is reported and the window goes on; two
// people crossing keep their ids, and a click on one shows where their track runs. Quitting while an
// annotated video is written stops its forward pass at once and removes the partial file.

#include "camera_dialog.h"
#include "crossing_video.h"
#include "image_view.h"
#include "main_window.h"
#include "media_browser.h"
#include "media_player.h"
#include "tasks_panel.h"
#include "test_support.h"
#include "timeline.h"
#include "track_strip.h"

#include "sapiens/common/log.h"
#include "sapiens/media/frame_number_pattern.h"
#include "sapiens/media/frame_source.h"
#include "sapiens/media/video_writer.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QIcon>
#include <QImage>
#include <QLabel>
#include <QMessageBox>
#include <QProgressDialog>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolBar>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

using sapiens::Task;
using sapiens::studio::MainWindow;

namespace {

constexpr int kTimeoutMs = 30000;
constexpr int kFrames = 24;
constexpr double kFps = 12;

QString fixtureModel(const char* task) {
  return QString::fromStdString(sapiens::test::fixture(std::string("golden/") + task + "/model.safetensors"));
}

// The frame number drawn into the picture on display (frame_number_pattern.h), -1 when unreadable.
qint64 numberOnDisplay(const MainWindow& window) {
  const std::optional<std::int64_t> number = sapiens::readFrameNumber(window.imageView()->image());
  return number ? qint64(*number) : -1;
}

QAction* action(MainWindow& window, const char* name) {
  return window.findChild<QAction*>(QLatin1String(name));
}

// Triggers `name` and waits for the frame it brings; returns the index shown.
qint64 triggerAndWait(MainWindow& window, const char* name) {
  QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
  action(window, name)->trigger();
  if (!shown.wait(kTimeoutMs)) return -2;
  return shown.last().at(0).toLongLong();
}

// The tiny fixture model at a quarter of its native 1024 x 768 input: quick on two busy cores.
bool loadSegModel(MainWindow& window) {
  window.setInputScale(0.25);
  QSignalSpy ready(&window, &MainWindow::modelReady);
  window.loadCheckpoint(Task::Seg, fixtureModel("seg"));
  return ready.wait(kTimeoutMs);
}

void runSegOnOpen(MainWindow& window, bool on) {
  for (Task task : sapiens::headTasksInRunOrder())
    window.tasksPanel()->setTaskSelected(task, on && task == Task::Seg);
  window.tasksPanel()->setRunsOnOpen(on);
}

// Which frame of the numbered video a Media thumbnail (96 x 72) shows: the one whose picture, shrunk the
// same way, is nearest above the bottom block row (where the length is drawn).
int frameInThumbnail(const QIcon& icon) {
  const QImage image = icon.pixmap(QSize(96, 96)).toImage().convertToFormat(QImage::Format_RGB888);
  if (image.size() != QSize(96, 72)) return -1;
  cv::Mat shown(image.height(), image.width(), CV_8UC3, const_cast<uchar*>(image.constBits()),
                std::size_t(image.bytesPerLine()));
  const cv::Rect top(0, 0, 96, 52);
  int best = -1;
  double bestDifference = 1e9;
  for (int i = 0; i < kFrames; ++i) {
    cv::Mat expected;
    cv::resize(sapiens::frameNumberPicture(160, 120, i), expected, cv::Size(96, 72), 0, 0, cv::INTER_AREA);
    cv::cvtColor(expected, expected, cv::COLOR_BGR2RGB);
    const double difference = cv::norm(shown(top), expected(top), cv::NORM_L1) / top.area();
    if (difference < bestDifference) best = i, bestDifference = difference;
  }
  return best;
}

}  // namespace

namespace {

// No identity switch: every box of a track is the same person's; `idOf` gets each person's track.
void trackOfEachPerson(const sapiens::VideoTracks& tracks, std::map<char, int>& idOf) {
  using sapiens::test::CrossingScene;
  const std::vector<int> ids = tracks.trackIds();
  QCOMPARE(ids.size(), std::size_t(2));
  for (int id : ids) {
    std::set<char> people;
    for (const auto& [index, box] : tracks.boxesOf(id))
      people.insert(CrossingScene::whoIs(box.x1, box.y1, int(index)));
    QCOMPARE(people.size(), std::size_t(1));
    idOf[*people.begin()] = id;
  }
  QVERIFY(idOf.count('a') && idOf.count('b'));
}

}  // namespace

class TestVideoGui : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("sapiens2-studio-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_video_gui"));
    QSettings().clear();
    QSettings().setValue(QStringLiteral("models/demoFallback"), false);  // only the models loaded here
    QVERIFY(dir_.isValid());
    qputenv("SAPIENS_CHECKPOINT_ROOT", dir_.filePath(QStringLiteral("no-checkpoints")).toUtf8());
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);

    // Frame i carries the number i in its pixels and is shown at i / 12 s.
    video_ = dir_.filePath(QStringLiteral("numbered.mp4"));
    sapiens::VideoWriterOptions writerOptions;
    writerOptions.width = 160;
    writerOptions.height = 120;
    writerOptions.fps = kFps;
    writerOptions.keyframeInterval = 6;
    sapiens::VideoWriter writer(video_.toStdString(), writerOptions);
    for (int i = 0; i < kFrames; ++i) writer.write(sapiens::frameNumberPicture(160, 120, i), i / kFps);
    writer.finish();
  }

  void opensAVideoWithItsTimeline() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* bar = window.findChild<QToolBar*>(QStringLiteral("timelineBar"));
    QVERIFY(bar);
    QVERIFY(!bar->isVisible());  // no video yet
    QVERIFY(!action(window, "actionPlayPause")->isEnabled());

    QSignalSpy opened(&window, &MainWindow::mediaOpened);
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.openPaths({video_});
    QVERIFY(opened.wait(kTimeoutMs));
    if (shown.isEmpty()) QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(shown.first().at(0).toLongLong(), 0);
    QCOMPARE(numberOnDisplay(window), 0);
    QVERIFY(bar->isVisible());
    auto* timeline = window.findChild<sapiens::widgets::Timeline*>(QStringLiteral("timeline"));
    QCOMPARE(timeline->frameCount(), qint64(kFrames));
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("timelineReadout"))
                ->text()
                .contains(QStringLiteral("frame 1 / 24")));
    QCOMPARE(window.windowTitle(), QStringLiteral("Sapiens2 Studio - numbered.mp4"));
    QVERIFY(action(window, "actionPlayPause")->isEnabled());
    QVERIFY(action(window, "actionNextFrame")->isEnabled());
    QCOMPARE(window.currentKey(), MainWindow::frameKey(video_, 0));

    // An image closes the video: the timeline goes away.
    QSignalSpy imageShown(&window, &MainWindow::imageShown);
    window.openPaths({QString::fromStdString(sapiens::test::resource("samples/astronaut.png"))});
    QVERIFY(imageShown.wait(kTimeoutMs));
    QVERIFY(!bar->isVisible());
    QVERIFY(!action(window, "actionPlayPause")->isEnabled());
    QVERIFY(!window.mediaPlayer()->isOpen());
  }

  void stepsAndSeeksLandOnTheFrameAsked() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.openPaths({video_});
    QVERIFY(shown.wait(kTimeoutMs));

    QCOMPARE(triggerAndWait(window, "actionNextFrame"), 1);
    QCOMPARE(numberOnDisplay(window), 1);
    QCOMPARE(triggerAndWait(window, "actionNextFrame"), 2);
    QCOMPARE(triggerAndWait(window, "actionPreviousFrame"), 1);
    QCOMPARE(numberOnDisplay(window), 1);
    QCOMPARE(triggerAndWait(window, "actionLastFrame"), kFrames - 1);
    QCOMPARE(numberOnDisplay(window), kFrames - 1);
    QCOMPARE(triggerAndWait(window, "actionFirstFrame"), 0);
    QCOMPARE(numberOnDisplay(window), 0);

    // The user drags the slider: the frame under it is shown, exactly.
    auto* slider = window.findChild<QSlider*>(QStringLiteral("timelineSlider"));
    QCOMPARE(slider->maximum(), kFrames - 1);
    shown.clear();
    slider->setValue(17);
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(shown.last().at(0).toLongLong(), 17);
    QCOMPARE(numberOnDisplay(window), 17);
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("timelineReadout"))
                ->text()
                .contains(QStringLiteral("frame 18 / 24")));

    // Keys, as a user presses them: '.' steps forward.
    shown.clear();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    QTest::keyClick(window.imageView(), Qt::Key_Period);
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(numberOnDisplay(window), 18);
  }

  void playsEveryFrameInOrderAndStopsAtTheEnd() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.openPaths({video_});
    QVERIFY(shown.wait(kTimeoutMs));

    std::vector<qint64> numbers;
    connect(&window, &MainWindow::mediaFrameShown, this, [&] { numbers.push_back(numberOnDisplay(window)); });
    QSignalSpy ended(window.mediaPlayer(), &sapiens::studio::MediaPlayer::ended);
    QElapsedTimer clock;
    clock.start();
    action(window, "actionPlayPause")->trigger();
    QVERIFY(window.mediaPlayer()->isPlaying());
    QVERIFY(ended.wait(kTimeoutMs));
    const double seconds = clock.elapsed() / 1000.0;

    std::vector<qint64> expected;
    for (int i = 1; i < kFrames; ++i) expected.push_back(i);
    QCOMPARE(numbers, expected);
    // Shown at the file's pace, not as fast as it decodes: 23 frame intervals at 12 fps.
    QVERIFY2(seconds > 0.8 * (kFrames - 1) / kFps, qPrintable(QString::number(seconds)));
    QVERIFY(!window.mediaPlayer()->isPlaying());
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("rateLabel"))->text().contains(QStringLiteral("fps")));

    // Play at the end starts again from the first frame.
    numbers.clear();
    action(window, "actionPlayPause")->trigger();
    QVERIFY(ended.wait(kTimeoutMs));
    QCOMPARE(numbers.front(), 0);
    QCOMPARE(numbers.back(), kFrames - 1);
  }

  void loopsAndPauses() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.openPaths({video_});
    QVERIFY(shown.wait(kTimeoutMs));
    action(window, "actionLoop")->trigger();
    QVERIFY(window.mediaPlayer()->isLooping());
    QCOMPARE(triggerAndWait(window, "actionLastFrame"), kFrames - 1);

    std::vector<qint64> indices;
    connect(&window, &MainWindow::mediaFrameShown, this, [&](qint64 index) { indices.push_back(index); });
    action(window, "actionPlayPause")->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(indices.size() >= 3, kTimeoutMs);
    QCOMPARE(indices[0], 0);  // past the last frame comes the first again
    QCOMPARE(indices[1], 1);

    action(window, "actionPlayPause")->trigger();
    QVERIFY(!window.mediaPlayer()->isPlaying());
    QTest::qWait(300);  // a frame already on its way may still land
    const std::size_t paused = indices.size();
    QTest::qWait(600);
    QCOMPARE(indices.size(), paused);
    action(window, "actionLoop")->trigger();  // the setting persists: leave it off for the other tests
  }

  void showsEachFrameWithItsOwnResults() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(loadSegModel(window));
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.openPaths({video_});
    QVERIFY(shown.wait(kTimeoutMs));
    shown.clear();
    window.mediaPlayer()->seek(kFrames - 6);
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(numberOnDisplay(window), kFrames - 6);
    runSegOnOpen(window, true);

    // Each frame of playback appears together with its segmentation: the result on display is always
    // the one of the frame on display, and every frame got one.
    int withResult = 0;
    std::vector<qint64> indices;
    QString mismatch;
    connect(&window, &MainWindow::resultShown, this, [&](const QString& key) {
      const qint64 index = window.mediaPlayer()->position();
      if (key != window.currentKey() || numberOnDisplay(window) < 0 ||
          key != MainWindow::frameKey(video_, numberOnDisplay(window)))
        mismatch = key + QStringLiteral(" on frame ") + QString::number(numberOnDisplay(window));
      if (window.currentResult() && !window.currentResult()->segLabels.empty()) ++withResult;
      indices.push_back(index);
    });
    QSignalSpy ended(window.mediaPlayer(), &sapiens::studio::MediaPlayer::ended);
    action(window, "actionPlayPause")->trigger();
    QVERIFY(ended.wait(kTimeoutMs * 2));
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
    QCOMPARE(withResult, 5);  // frames 19..23
    QCOMPARE(indices, (std::vector<qint64>{19, 20, 21, 22, 23}));
    QVERIFY(window.imageView()->hasMaskLayer());
    runSegOnOpen(window, false);
  }

  void streamsTheTestPatternCamera() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(loadSegModel(window));
    runSegOnOpen(window, true);
    QSignalSpy opened(&window, &MainWindow::mediaOpened);
    std::vector<qint64> indices;
    int withResult = 0;
    connect(&window, &MainWindow::mediaFrameShown, this, [&](qint64 index) { indices.push_back(index); });
    connect(&window, &MainWindow::resultShown, this, [&](const QString& key) {
      if (key == window.currentKey() && window.currentResult()) ++withResult;
    });
    window.openMedia(QStringLiteral("synthetic:160x120@30"));
    QVERIFY(opened.wait(kTimeoutMs));
    QVERIFY(window.mediaPlayer()->info().live);
    QVERIFY(window.mediaPlayer()->isPlaying());
    QVERIFY(!window.findChild<QSlider*>(QStringLiteral("timelineSlider"))->isVisible());
    QVERIFY(!action(window, "actionNextFrame")->isEnabled());
    QTRY_VERIFY_WITH_TIMEOUT(indices.size() >= 6, kTimeoutMs);

    // The model is slower than the camera: frames in between are dropped, never queued, and each frame
    // shown comes with its own results.
    for (std::size_t i = 1; i < indices.size(); ++i) QVERIFY(indices[i] > indices[i - 1]);
    QVERIFY(indices.back() - indices.front() + 1 > qint64(indices.size()));
    QVERIFY(withResult >= int(indices.size()) - 1);
    const QString rate = window.findChild<QLabel*>(QStringLiteral("rateLabel"))->text();
    QVERIFY2(rate.contains(QStringLiteral("fps")) && rate.contains(QStringLiteral("dropped")) &&
                 !rate.contains(QStringLiteral(" 0 dropped")),
             qPrintable(rate));

    // Stop: no more frames, the timeline goes away, the last picture stays.
    action(window, "actionCloseMedia")->trigger();
    QVERIFY(!window.findChild<QToolBar*>(QStringLiteral("timelineBar"))->isVisible());
    QTest::qWait(300);
    const std::size_t stopped = indices.size();
    QTest::qWait(500);
    QCOMPARE(indices.size(), stopped);
    QVERIFY(window.imageView()->hasImage());
    runSegOnOpen(window, false);
  }

  void cameraDialogStartsTheTestPattern() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    bool sawDialog = false;
    QTimer::singleShot(0, this, [&] {
      auto* dialog = qobject_cast<sapiens::studio::CameraDialog*>(QApplication::activeModalWidget());
      if (!dialog) return;
      sawDialog = true;
      auto* devices = dialog->findChild<QComboBox*>(QStringLiteral("cameraDevices"));
      devices->setCurrentIndex(devices->count() - 1);  // the test pattern is always last
      auto* sizes = dialog->findChild<QComboBox*>(QStringLiteral("cameraSizes"));
      sizes->setCurrentIndex(sizes->findText(QStringLiteral("640 x 480")));
      auto* rates = dialog->findChild<QComboBox*>(QStringLiteral("cameraRates"));
      rates->setCurrentIndex(rates->findText(QStringLiteral("15 fps")));
      dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
    });
    QSignalSpy opened(&window, &MainWindow::mediaOpened);
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    action(window, "actionOpenCamera")->trigger();
    QVERIFY(sawDialog);
    QVERIFY(opened.wait(kTimeoutMs));
    QCOMPARE(opened.first().at(0).toString(), QStringLiteral("synthetic:640x480@15"));
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(window.imageView()->image().cols, 640);
    QCOMPARE(window.imageView()->image().rows, 480);
    window.closeMedia();
  }

  void writesTheAnnotatedVideo() {
    // Six frames of the bundled sample, 1/4 s apart.
    const cv::Mat sample = cv::imread(sapiens::test::resource("samples/astronaut.png"));
    QVERIFY(!sample.empty());
    cv::Mat small;
    cv::resize(sample, small, cv::Size(192, 256), 0, 0, cv::INTER_AREA);
    const QString input = dir_.filePath(QStringLiteral("astronaut.mkv"));
    {
      sapiens::VideoWriterOptions options;
      options.width = small.cols;
      options.height = small.rows;
      options.fps = 4;
      sapiens::VideoWriter writer(input.toStdString(), options);
      for (int i = 0; i < 6; ++i) writer.write(small, i * 0.25);
      writer.finish();
    }

    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(!action(window, "actionExport_video")->isEnabled());  // no video open
    QVERIFY(loadSegModel(window));
    runSegOnOpen(window, false);
    window.tasksPanel()->setTaskSelected(Task::Seg, true);
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.openPaths({input});
    QVERIFY(shown.wait(kTimeoutMs));
    QVERIFY(action(window, "actionExport_video")->isEnabled());

    const QString output = dir_.filePath(QStringLiteral("astronaut.annotated.mp4"));
    QSignalSpy finished(&window, &MainWindow::videoExportFinished);
    window.exportAnnotatedVideo(output);
    QVERIFY(window.findChild<QProgressDialog*>(QStringLiteral("videoExportProgress")));
    QVERIFY(finished.wait(kTimeoutMs * 2));
    QCOMPARE(finished.first().at(1).toString(), QString());
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("6 frames")));

    // Every frame, at its time, with the part mask drawn over the picture.
    auto annotated = sapiens::openFrameSource(output.toStdString());
    auto original = sapiens::openFrameSource(input.toStdString());
    double largestChange = 0;
    for (int i = 0; i < 6; ++i) {
      const auto a = annotated->next();
      const auto b = original->next();
      QVERIFY(a && b);
      QVERIFY(std::abs(a->timestampSeconds - b->timestampSeconds) < 1e-3);
      largestChange =
          std::max(largestChange, cv::norm(a->bgr, b->bgr, cv::NORM_L1) / double(a->bgr.total() * 3));
    }
    QVERIFY(!annotated->next());
    QVERIFY2(largestChange > 3, qPrintable(QString::number(largestChange)));
    // The run's scratch folder is gone; only the video is left beside the input.
    QCOMPARE(QDir(dir_.path())
                 .entryList({QStringLiteral(".sapiens-export-*")}, QDir::AllEntries | QDir::Hidden)
                 .size(),
             0);
    window.closeMedia();
  }

  // Quitting while an annotated video is written, the first frame's forward under way (the seg fixture at
  // 1.5 times its native input: a forward of 8-12 s on two cores): Stop and Quit closes the window within
  // 2 s (the pass stops between backbone blocks), and neither the partial video nor the export's scratch
  // folder is left.
  void quittingDuringAnExportStopsItsForwardAndRemovesThePartialVideo() {
    QTemporaryDir dir;
    const QString input = dir.filePath(QStringLiteral("three.mp4"));
    sapiens::VideoWriterOptions writerOptions;
    writerOptions.width = 160;
    writerOptions.height = 120;
    writerOptions.fps = kFps;
    sapiens::VideoWriter writer(input.toStdString(), writerOptions);
    for (int i = 0; i < 3; ++i) writer.write(sapiens::frameNumberPicture(160, 120, i), i / kFps);
    writer.finish();
    // The video run logs the input's size just before its frames go through the model.
    std::atomic<bool> framesGoing{false};
    struct LogWatch {
      int id;
      double scale = QSettings().value(QStringLiteral("compute/inputScale"), 1.0).toDouble();
      ~LogWatch() {
        sapiens::log::removeCallback(id);
        QSettings().setValue(QStringLiteral("compute/inputScale"), scale);  // for the tests after this one
      }
    } watch{sapiens::log::addCallback([&framesGoing](sapiens::log::Level, std::string_view message) {
      if (message.find("three.mp4: 160x120") != std::string_view::npos) framesGoing = true;
    })};

    auto window = std::make_unique<MainWindow>();
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window.get()));
    QVERIFY(loadSegModel(*window));
    runSegOnOpen(*window, false);
    window->tasksPanel()->setTaskSelected(Task::Seg, true);
    QSignalSpy shown(window.get(), &MainWindow::mediaFrameShown);
    window->openPaths({input});
    QVERIFY(shown.wait(kTimeoutMs));
    window->setInputScale(1.5);
    const QString output = dir.filePath(QStringLiteral("three.annotated.mp4"));
    window->exportAnnotatedVideo(output);
    QTRY_VERIFY_WITH_TIMEOUT(framesGoing, kTimeoutMs);
    QTest::qWait(500);  // into the first frame's forward
    auto* progress = window->findChild<QProgressDialog*>(QStringLiteral("videoExportProgress"));
    QVERIFY(progress && progress->value() <= 0);  // no frame done yet

    window->close();
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = window->findChild<QMessageBox*>(QStringLiteral("quitDialog"))) && box->isVisible());
    QVERIFY2(box->text().contains(QStringLiteral("an annotated video export")), qPrintable(box->text()));
    QElapsedTimer quitting;
    quitting.start();
    QTest::mouseClick(box->findChild<QPushButton*>(QStringLiteral("stopAndQuit")), Qt::LeftButton);
    QTRY_VERIFY(!window->isVisible());
    window.reset();  // joins the export's thread
    const qint64 ms = quitting.elapsed();
    qInfo("window gone %lld ms after Stop and Quit", ms);
    QVERIFY2(ms < 2000, qPrintable(QString::number(ms)));
    QVERIFY(!QFile::exists(output));
    QCOMPARE(QDir(dir.path())
                 .entryList({QStringLiteral(".sapiens-export-*")}, QDir::AllEntries | QDir::Hidden)
                 .size(),
             0);
  }

  // Two people cross with the boxes from a file (File > Person Boxes for Video), B hidden behind A for 5
  // frames: each keeps one id through the video; clicking a person highlights their track, and the
  // timeline marks the frames they are seen in; a click there goes to that frame.
  void followsEachPersonsTrackThroughACrossing() {
    using sapiens::test::CrossingScene;
    const std::string folder = dir_.path().toStdString();
    const QString video = QString::fromStdString(sapiens::test::writeCrossingVideo(folder));
    const QString boxes = QString::fromStdString(sapiens::test::writeCrossingBoxes(folder));
    MainWindow window;
    window.resize(1000, 700);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.setInputScale(0.125);  // 128 x 96: quick on two busy cores
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.loadCheckpoint(Task::Pose, fixtureModel("pose"));
    QVERIFY(ready.wait(kTimeoutMs));
    for (Task task : sapiens::headTasksInRunOrder())
      window.tasksPanel()->setTaskSelected(task, task == Task::Pose);
    window.tasksPanel()->setRunsOnOpen(true);
    QVERIFY(!action(window, "actionVideoPersonBoxes")->isEnabled());

    QSignalSpy results(&window, &MainWindow::resultShown);
    window.openPaths({video});
    QVERIFY(results.wait(kTimeoutMs));
    QVERIFY(action(window, "actionVideoPersonBoxes")->isEnabled());
    QSignalSpy loaded(&window, &MainWindow::videoBoxesLoaded);
    window.loadVideoBoxes(dir_.filePath(QStringLiteral("no-such-boxes.json")));
    QVERIFY(loaded.wait(kTimeoutMs));
    QVERIFY2(loaded.last().at(1).toString().contains(QStringLiteral("no-such-boxes.json")),
             qPrintable(loaded.last().at(1).toString()));
    results.clear();
    window.loadVideoBoxes(boxes);
    QVERIFY(loaded.wait(kTimeoutMs));
    QCOMPARE(loaded.last().at(1).toString(), QString());
    QVERIFY(results.wait(kTimeoutMs));  // frame 0 again, in the file's boxes
    QCOMPARE(window.imageView()->poses().size(), std::size_t(2));

    QSignalSpy ended(window.mediaPlayer(), &sapiens::studio::MediaPlayer::ended);
    action(window, "actionPlayPause")->trigger();
    QVERIFY(ended.wait(kTimeoutMs * 4));
    const sapiens::VideoTracks& tracks = window.videoTracks();
    QCOMPARE(tracks.framesRecorded(), std::size_t(CrossingScene::kFrames));
    std::map<char, int> idOf;
    trackOfEachPerson(tracks, idOf);
    if (QTest::currentTestFailed()) return;

    // On the last frame, the people are drawn with their ids; a click on B highlights B's track.
    sapiens::widgets::ImageView* view = window.imageView();
    QCOMPARE(view->poses().size(), std::size_t(2));
    const auto clickAt = [&](const cv::Rect& box) {
      const QPointF centre(box.x + box.width / 2.0, box.y + box.height / 2.0);
      QTest::mouseClick(view, Qt::LeftButton, {}, view->imageToWidget(centre).toPoint());
    };
    const int last = CrossingScene::kFrames - 1;
    clickAt(CrossingScene::b(last));
    QCOMPARE(window.selectedTrack(), idOf['b']);
    QCOMPARE(view->highlightedTrack(), idOf['b']);
    QCOMPARE(view->trackPath().size(), std::size_t(CrossingScene::kFrames - 5));
    auto* timeline = window.findChild<sapiens::widgets::Timeline*>(QStringLiteral("timeline"));
    auto* strip = window.findChild<sapiens::widgets::TrackStrip*>(QStringLiteral("timelineTrackStrip"));
    QVERIFY(timeline && strip);
    QVERIFY(strip->isVisible());
    const std::vector<sapiens::TrackSpan> bSpans{{0, 15}, {21, last}};
    QVERIFY(timeline->trackSpans() == bSpans);
    QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("#%1").arg(idOf['b'])),
             qPrintable(window.statusBar()->currentMessage()));
    clickAt(CrossingScene::a(last));
    QCOMPARE(window.selectedTrack(), idOf['a']);
    QVERIFY(timeline->trackSpans() == (std::vector<sapiens::TrackSpan>{{0, last}}));

    // A click on the marks goes to that frame, where the person keeps their id and their highlight.
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    results.clear();
    QTest::mouseClick(strip, Qt::LeftButton, {},
                      QPoint(int(std::lround(strip->xOf(5))), strip->height() / 2));
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(shown.last().at(0).toLongLong(), 5);
    if (results.isEmpty()) QVERIFY(results.wait(kTimeoutMs));
    QCOMPARE(view->poses().size(), std::size_t(2));
    for (const sapiens::PoseInstance& pose : view->poses()) {
      const char who = CrossingScene::whoIs(pose.bbox.x1, pose.bbox.y1, 5);
      QCOMPARE(pose.trackId, idOf[who]);
    }
    QCOMPARE(view->highlightedTrack(), idOf['a']);
    QCOMPARE(tracks.trackIds().size(), std::size_t(2));

    // Beside everyone: nobody is highlighted and the marks go.
    QTest::mouseClick(view, Qt::LeftButton, {}, view->imageToWidget(QPointF(310, 150)).toPoint());
    QCOMPARE(window.selectedTrack(), -1);
    QVERIFY(!strip->isVisible());
    window.closeMedia();
    QCOMPARE(window.videoTracks().framesRecorded(), std::size_t(0));
  }

  // A video in the Media dock shows one of its frames, from about a tenth of the way in (frame 2 of 24),
  // with its length, not a warning sign; a file that cannot be read keeps the warning, saying why.
  void theMediaListShowsAVideosFrameAndLength() {
    const QString fake = dir_.filePath(QStringLiteral("not_a_video.mp4"));
    QFile file(fake);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(4096, 'x'));
    file.close();
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.openPaths({video_, fake});
    sapiens::studio::MediaBrowser* media = window.mediaBrowser();
    QCOMPARE(media->count(), 2);
    constexpr int kDuration = sapiens::studio::MediaBrowser::kDurationRole;
    QTRY_VERIFY_WITH_TIMEOUT(media->item(0)->data(kDuration).isValid(), kTimeoutMs);
    QVERIFY2(std::abs(media->item(0)->data(kDuration).toDouble() - kFrames / kFps) < 0.1,
             qPrintable(media->item(0)->data(kDuration).toString()));
    QVERIFY2(media->item(0)->toolTip().contains(QStringLiteral("0:02")),
             qPrintable(media->item(0)->toolTip()));
    QCOMPARE(frameInThumbnail(media->item(0)->icon()), 2);

    QTRY_VERIFY_WITH_TIMEOUT(media->item(1)->toolTip() != fake, kTimeoutMs);
    QVERIFY2(media->item(1)->toolTip().contains(QStringLiteral("not_a_video.mp4")),
             qPrintable(media->item(1)->toolTip()));
    QVERIFY(!media->item(1)->data(kDuration).isValid());
    const QImage warning = window.style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(32).toImage();
    QCOMPARE(media->item(1)->icon().pixmap(32).toImage(), warning);
  }

  void reportsWhatIsNotAVideoAndGoesOn() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const QString fake = dir_.filePath(QStringLiteral("holiday.mp4"));
    QFile file(fake);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray(4096, 'x'));
    file.close();

    QSignalSpy failed(&window, &MainWindow::imageFailed);
    window.openPaths({fake});
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("holiday.mp4")));
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("holiday.mp4")));
    QVERIFY(!window.findChild<QToolBar*>(QStringLiteral("timelineBar"))->isVisible());
    QVERIFY(!window.mediaPlayer()->isOpen());

    window.openPaths({dir_.filePath(QStringLiteral("gone.mkv"))});
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(failed.last().at(1).toString().contains(QStringLiteral("gone.mkv")));

    // A malformed test-pattern name is explained too.
    window.openMedia(QStringLiteral("synthetic:wide"));
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(failed.last().at(1).toString().contains(QStringLiteral("WIDTHxHEIGHT")));

    // Still working.
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.openPaths({video_});
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(numberOnDisplay(window), 0);
  }

 private:
  QTemporaryDir dir_;
  QString video_;
};

QTEST_MAIN(TestVideoGui)
#include "test_video_gui.moc"
