// The Fine-tuning dock of the real main window, as a user meets it: View > Fine-tuning shows it; a seg
// label set made from the picture on display; a brush stroke painted with the mouse, undone and redone
// (the mask pixels, and the autosaved mask file); a checkpoint of the wrong task refused with a message;
// training the tiny fixture model on the worker thread with the loss curve and the metric filling in,
// pause (no new points), resume, stop, and the head saved; "start from prediction" and the eraser, fill
// and polygon tools on a seg result; how a run is going: the learning rate the range test chose, the
// held-out frame's prediction before and after, and the over-fitting warning on a set that over-fits.

#include "event_loop_gaps.h"
#include "finetune_panel.h"
#include "label_canvas.h"
#include "label_editor_tab.h"
#include "loss_chart.h"
#include "main_window.h"
#include "prediction_preview.h"
#include "surface_format.h"
#include "tasks_panel.h"
#include "test_support.h"
#include "training_tab.h"

#include "sapiens/common/log.h"
#include "sapiens/export/npy.h"
#include "sapiens/finetune/finetuned_model_file.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/finetune/overfitting_monitor.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QDirIterator>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QToolBar>
#include <QUndoStack>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <string_view>

using sapiens::studio::FineTunePanel;
using sapiens::studio::LabelEditorTab;
using sapiens::studio::MainWindow;
using State = sapiens::studio::FineTunePanel::TrainingState;

namespace {

constexpr int kTimeoutMs = 20000;
constexpr int kInferenceTimeoutMs = 120000;  // a model run on a loaded 2-core machine

QString fixtureModel(const char* task) {
  return QString::fromStdString(sapiens::test::fixture(std::string("golden/") + task + "/model.safetensors"));
}

// The names in `folder` as hex bytes (a name made of a pointer's bytes is not UTF-8), which are removed.
QStringList takeEntries(const QString& folder) {
  QStringList names;
  for (const auto& entry : std::filesystem::directory_iterator(folder.toStdString())) {
    names << QString::fromLatin1(QByteArray::fromStdString(entry.path().filename().string()).toHex(' '));
    std::filesystem::remove_all(entry.path());
  }
  return names;
}

template <typename T>
T* child(QObject* parent, const char* name) {
  T* found = parent->findChild<T*>(QString::fromLatin1(name));
  if (!found) qWarning("no child %s", name);
  return found;
}

// Clicks the tool bar button of the action `name`.
void clickAction(FineTunePanel* panel, const char* name) {
  auto* toolbar = child<QToolBar>(panel, "fineTuneTools");
  QAction* action = child<QAction>(panel, name);
  QWidget* button = toolbar->widgetForAction(action);
  QVERIFY2(button && button->isEnabled(), name);
  QTest::mouseClick(button, Qt::LeftButton);
}

int labelled(const cv::Mat& mask) {
  return cv::countNonZero(mask != sapiens::kIgnoreLabel);
}

QTabWidget* tabs(FineTunePanel& panel) {
  return child<QTabWidget>(&panel, "fineTuneTabs");
}

bool sameMask(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::countNonZero(a != b) == 0;
}

// A brush stroke in class 2 (Eyeglass) from (100, 200) to (300, 200), radius 6, on `panel`'s canvas: it
// paints that band and nothing else; `stroke` is the mask after it.
void paintAStroke(FineTunePanel* panel, cv::Mat& stroke) {
  sapiens::widgets::LabelCanvas* canvas = panel->canvas();
  child<QListWidget>(panel, "fineTuneClasses")->setCurrentRow(2);
  child<QSpinBox>(panel, "fineTuneBrushSize")->setValue(6);
  clickAction(panel, "actionLabelBrush");
  QVERIFY(canvas->isVisible() && canvas->width() > 100);
  auto at = [&](double x, double y) { return canvas->widgetPoint({x + 0.5, y + 0.5}).toPoint(); };
  QTest::mousePress(canvas, Qt::LeftButton, {}, at(100, 200));
  for (int x = 120; x <= 300; x += 20) QTest::mouseMove(canvas, at(x, 200));
  QTest::mouseRelease(canvas, Qt::LeftButton, {}, at(300, 200));
  stroke = canvas->mask().clone();
  const int painted = labelled(stroke);
  // A 200 x 11 pixel band with round ends, give or take the widget-to-picture rounding.
  QVERIFY2(painted > 1800 && painted < 3200, qPrintable(QString::number(painted)));
  QCOMPARE(cv::countNonZero(stroke == 2), painted);
  QCOMPARE(int(stroke.at<std::uint8_t>(200, 200)), 2);
  QCOMPARE(int(stroke.at<std::uint8_t>(203, 150)), 2);
  QCOMPARE(int(stroke.at<std::uint8_t>(230, 200)), 255);
  QCOMPARE(int(stroke.at<std::uint8_t>(200, 60)), 255);
}

// Pause: once the worker is parked, no new points; resume: they come again; stop: the run ends after the
// current step and says so. `stoppedAt` is the step it stopped at.
void pauseResumeStop(FineTunePanel* panel, int& stoppedAt) {
  sapiens::widgets::LossChart* loss = panel->lossChart();
  auto* train = child<QPushButton>(panel, "fineTuneTrain");
  QTest::mouseClick(child<QPushButton>(panel, "fineTunePause"), Qt::LeftButton);
  QCOMPARE(panel->trainingState(), State::Paused);
  QTRY_VERIFY_WITH_TIMEOUT(
      child<QLabel>(panel, "fineTuneStats")->text().startsWith(QStringLiteral("Paused at step")), kTimeoutMs);
  const int pausedAt = loss->pointCount(0);
  QTest::qWait(400);
  QCOMPARE(loss->pointCount(0), pausedAt);
  QTest::mouseClick(child<QPushButton>(panel, "fineTunePause"), Qt::LeftButton);  // now "Resume"
  QCOMPARE(panel->trainingState(), State::Training);
  QTRY_VERIFY_WITH_TIMEOUT(loss->pointCount(0) > pausedAt + 2, kTimeoutMs);

  // Stop: the run ends after the current step and says so; the curve stops growing.
  QTest::mouseClick(child<QPushButton>(panel, "fineTuneStop"), Qt::LeftButton);
  QTRY_COMPARE_WITH_TIMEOUT(panel->trainingState(), State::Stopped, kTimeoutMs);
  QVERIFY2(panel->message().contains(QStringLiteral("(stopped)")), qPrintable(panel->message()));
  // The summary's figure is over what the labels teach, the all-class one beside it.
  QVERIFY2(panel->message().contains(QStringLiteral("over the labelled classes (all classes ")),
           qPrintable(panel->message()));
  QCOMPARE(child<QLabel>(panel, "fineTuneStats")->text(),
           QStringLiteral("Stopped at step %1").arg(loss->pointCount(0)));
  stoppedAt = loss->pointCount(0);
  QTest::qWait(200);
  QCOMPARE(loss->pointCount(0), stoppedAt);
  QVERIFY(train->isEnabled());
  QVERIFY(child<QPushButton>(panel, "fineTuneContinue")->isEnabled());
}

// The head, saved on the worker thread, is a fine-tuning head file of the seg task at `step`.
void savedHeadIsOfTheSegTask(FineTunePanel* panel, const QString& head, int stoppedAt) {
  QSignalSpy saved(panel, &FineTunePanel::modelSaved);
  panel->saveModel(head, false);
  QVERIFY(saved.wait(kTimeoutMs));
  QCOMPARE(saved.first().at(1).toString(), QString());
  const auto metadata = sapiens::readModelMetadata(head.toStdString());
  QCOMPARE(metadata.at("content"), std::string("head"));
  QCOMPARE(metadata.at("task"), std::string("seg"));
  QCOMPARE(std::stoi(metadata.at("step")), stoppedAt);
}

// The sample picture on display in `panel` and a new seg set at `setFolder`.
void showTheSampleWithASegSet(FineTunePanel& panel, const QString& setFolder) {
  const std::string sample = sapiens::test::resource("samples/astronaut.png");
  panel.setCurrentPicture(QString::fromStdString(sample), cv::imread(sample, cv::IMREAD_COLOR));
  QVERIFY(panel.createLabelSet(setFolder, sapiens::Task::Seg));
}

// A seg set at `setFolder` of the picture on display twice: the training frame labelled all class 1, the
// held-out frame all class 2.
void writeOverfittingSet(FineTunePanel& panel, const QString& setFolder) {
  QVERIFY(panel.createLabelSet(setFolder, sapiens::Task::Seg));
  // saveNow: the frames' files are written off the GUI thread, on disk once it returns.
  QVERIFY2(panel.addCurrentPicture(false) && panel.addCurrentPicture(false) && panel.saveNow(),
           qPrintable(panel.message()));
  sapiens::LabelSet labels = *panel.labelSet();
  for (std::size_t i = 0; i < 2; ++i) {
    sapiens::FrameLabels frame = sapiens::readFrameLabels(labels, i);
    frame.mask.setTo(cv::Scalar(int(i) + 1));
    sapiens::writeFrameLabels(labels, i, frame);
  }
  labels.frames[0].split = sapiens::FrameSplit::Train;
  labels.frames[1].split = sapiens::FrameSplit::Validation;
  sapiens::saveLabelSet(labels);
}

// A COCO keypoints file at `folder`/coco.json of `count` pictures in `folder`/images (copies of the sample
// photo), one person with three keypoints each.
void writeCocoPictures(const QString& folder, int count) {
  QVERIFY(QDir().mkpath(folder + QStringLiteral("/images")));
  const QString sample = QString::fromStdString(sapiens::test::resource("samples/astronaut.png"));
  QJsonArray images, annotations;
  for (int i = 0; i < count; ++i) {
    const QString name = QStringLiteral("p%1.png").arg(i);
    QVERIFY(QFile::copy(sample, folder + QStringLiteral("/images/") + name));
    images.append(QJsonObject{{"id", i}, {"file_name", name}, {"width", 512}, {"height", 512}});
    annotations.append(QJsonObject{{"id", i + 1},
                                   {"image_id", i},
                                   {"category_id", 1},
                                   {"bbox", QJsonArray{100, 80, 200, 300}},
                                   {"num_keypoints", 3},
                                   {"keypoints", QJsonArray{150, 120, 2, 200, 160, 2, 180, 300, 1}}});
  }
  const QJsonObject person{
      {"id", 1}, {"name", "person"}, {"keypoints", QJsonArray{"a", "b", "c"}}, {"skeleton", QJsonArray{}}};
  QFile coco(folder + QStringLiteral("/coco.json"));
  QVERIFY(coco.open(QIODevice::WriteOnly));
  coco.write(
      QJsonDocument(
          QJsonObject{{"images", images}, {"annotations", annotations}, {"categories", QJsonArray{person}}})
          .toJson());
}

}  // namespace

class TestFinetunePanel : public QObject {
  Q_OBJECT

 public:
  static void initMain() { sapiens::studio::prepareOpenGl(); }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("sapiens2-studio-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_finetune_panel"));
    QSettings().clear();
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);
  }

  void labelPaintUndoRedoThenTrainPauseStopAndSave() {
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    // View > Fine-tuning shows the dock, hidden at first.
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("fineTuningDock"));
    QVERIFY(dock);
    QVERIFY(!dock->isVisible());
    QAction* toggle = child<QAction>(&window, "actionTogglefineTuningDock");
    QVERIFY(toggle);
    toggle->trigger();
    QVERIFY(dock->isVisible());
    dock->setFloating(true);
    dock->resize(900, 720);
    QVERIFY(QTest::qWaitForWindowExposed(dock));
    auto* panel = dock->findChild<FineTunePanel*>();
    QVERIFY(panel);
    panel->setAutosaveDelay(200);

    // A seg label set from the picture on display.
    QSignalSpy shown(&window, &MainWindow::imageShown);
    window.openPaths({QString::fromStdString(sapiens::test::resource("samples/astronaut.png"))});
    QVERIFY(shown.wait(kTimeoutMs));
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    QVERIFY2(panel->createLabelSet(setFolder, sapiens::Task::Seg), qPrintable(panel->message()));
    auto* addPicture = child<QPushButton>(panel, "fineTuneAddPicture");
    QVERIFY(addPicture->isEnabled());
    QTest::mouseClick(addPicture, Qt::LeftButton);
    QVERIFY2(panel->labelSet() && panel->labelSet()->frames.size() == 1, qPrintable(panel->message()));
    // No seg result on display: "start from prediction" falls back to empty labels, and says so.
    QVERIFY2(panel->message().contains(QStringLiteral("empty labels")), qPrintable(panel->message()));
    sapiens::widgets::LabelCanvas* canvas = panel->canvas();
    QCOMPARE(canvas->mode(), sapiens::widgets::LabelCanvas::Mode::Seg);
    QCOMPARE(canvas->mask().cols, 512);
    QCOMPARE(labelled(canvas->mask()), 0);

    cv::Mat stroke;
    paintAStroke(panel, stroke);
    if (QTest::currentTestFailed()) return;

    clickAction(panel, "actionLabelUndo");
    QCOMPARE(labelled(canvas->mask()), 0);
    QSignalSpy autosaved(panel, &FineTunePanel::autosaved);
    clickAction(panel, "actionLabelRedo");
    QVERIFY(sameMask(canvas->mask(), stroke));
    // Saved on its own shortly after the last edit: the mask file holds the redone stroke.
    QVERIFY(autosaved.wait(kTimeoutMs));
    const QString maskFile =
        QDir(setFolder).filePath(QString::fromStdString(panel->labelSet()->frames[0].mask));
    QVERIFY(sameMask(cv::imread(maskFile.toStdString(), cv::IMREAD_UNCHANGED), stroke));

    // Training settings for the tiny fixture model; a checkpoint of another task is refused.
    QSignalSpy states(panel, &FineTunePanel::trainingStateChanged);
    auto* baseModel = child<QLineEdit>(panel, "fineTuneBaseModel");
    child<QLineEdit>(panel, "fineTuneInputSize")->setText(QStringLiteral("128x96"));
    child<QSpinBox>(panel, "fineTuneSteps")->setValue(100000);
    child<QSpinBox>(panel, "fineTuneBatch")->setValue(2);
    child<QSpinBox>(panel, "fineTuneEvaluateEvery")->setValue(3);
    auto* train = child<QPushButton>(panel, "fineTuneTrain");
    baseModel->setText(fixtureModel("pose"));
    QTest::mouseClick(train, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(panel->trainingState(), State::Failed, kTimeoutMs);
    QVERIFY2(panel->message().contains(QStringLiteral("pose")), qPrintable(panel->message()));
    QVERIFY(train->isEnabled());

    baseModel->setText(fixtureModel("seg"));
    QTest::mouseClick(train, Qt::LeftButton);
    sapiens::widgets::LossChart* loss = panel->lossChart();
    sapiens::widgets::LossChart* metric = panel->metricChart();
    QTRY_VERIFY_WITH_TIMEOUT(loss->pointCount(0) >= 6 && metric->pointCount(0) >= 1, kTimeoutMs);
    QCOMPARE(panel->trainingState(), State::Training);
    const QVector<QPointF> points = loss->points(0);
    for (int i = 0; i < points.size(); ++i) {
      QVERIFY(std::isfinite(points[i].y()) && points[i].y() > 0);
      if (i > 0) QVERIFY(points[i].x() > points[i - 1].x());
    }
    QCOMPARE(points.front().x(), 1.0);
    QVERIFY(loss->pointCount(1) >= 1);  // the evaluation loss
    const QString stats = child<QLabel>(panel, "fineTuneStats")->text();
    QVERIFY2(stats.contains(QStringLiteral("steps/s")) && stats.contains(QStringLiteral("left")) &&
                 stats.contains(QStringLiteral("mIoU")),
             qPrintable(stats));
    // The preview: the head's prediction on the network input (96 wide, 128 high).
    QTRY_VERIFY_WITH_TIMEOUT(!panel->previewImage().isNull(), kTimeoutMs);
    QCOMPARE(panel->previewImage().size(), QSize(96, 128));

    int stoppedAt = 0;
    pauseResumeStop(panel, stoppedAt);
    if (QTest::currentTestFailed()) return;

    // The head, saved on the worker thread, is a fine-tuning head file of the seg task.
    savedHeadIsOfTheSegTask(panel, dir.filePath(QStringLiteral("head.safetensors")), stoppedAt);
  }

  // Closing the window while a run trains asks first; Keep Working keeps it training; Stop and Quit
  // closes, the labels are saved, no temporary file is left and the window is gone within 2 s.
  void closingDuringTrainingAsksAndQuitsQuickly() {
    QTemporaryDir dir;
    auto* window = new MainWindow;
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window));
    child<QAction>(window, "actionTogglefineTuningDock")->trigger();
    auto* panel = window->findChild<FineTunePanel*>();
    QSignalSpy shown(window, &MainWindow::imageShown);
    window->openPaths({QString::fromStdString(sapiens::test::resource("samples/astronaut.png"))});
    QVERIFY(shown.wait(kTimeoutMs));
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    QVERIFY2(panel->createLabelSet(setFolder, sapiens::Task::Seg), qPrintable(panel->message()));
    QTest::mouseClick(child<QPushButton>(panel, "fineTuneAddPicture"), Qt::LeftButton);
    cv::Mat stroke;
    paintAStroke(panel, stroke);
    if (QTest::currentTestFailed()) return;
    child<QLineEdit>(panel, "fineTuneBaseModel")->setText(fixtureModel("seg"));
    child<QLineEdit>(panel, "fineTuneInputSize")->setText(QStringLiteral("128x96"));
    child<QSpinBox>(panel, "fineTuneSteps")->setValue(100000);
    QTest::mouseClick(child<QPushButton>(panel, "fineTuneTrain"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(panel->lossChart()->pointCount(0) >= 2, kTimeoutMs);

    auto askToClose = [&]() -> QMessageBox* {
      window->close();
      QMessageBox* box = nullptr;
      [&] {
        QTRY_VERIFY((box = window->findChild<QMessageBox*>(QStringLiteral("quitDialog"))) &&
                    box->isVisible());
      }();
      return box;
    };
    QMessageBox* box = askToClose();
    QVERIFY(box);
    QVERIFY2(box->text().contains(QStringLiteral("a fine-tuning run")), qPrintable(box->text()));
    QTest::mouseClick(child<QPushButton>(box, "keepWorking"), Qt::LeftButton);
    QTRY_VERIFY(!window->findChild<QMessageBox*>(QStringLiteral("quitDialog")));
    QVERIFY(window->isVisible());
    const int steps = panel->lossChart()->pointCount(0);
    QTRY_VERIFY_WITH_TIMEOUT(panel->lossChart()->pointCount(0) > steps, kTimeoutMs);  // still training

    box = askToClose();
    QVERIFY(box);
    QTest::mouseClick(child<QPushButton>(box, "stopAndQuit"), Qt::LeftButton);
    QTRY_VERIFY(!window->isVisible());
    QElapsedTimer gone;
    gone.start();
    delete window;
    QVERIFY2(gone.elapsed() < 2000, qPrintable(QString::number(gone.elapsed())));
    QSettings().clear();  // the window saved its layout (the dock shown) on closing
    QDirIterator files(dir.path(), QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (files.hasNext()) {
      const QString file = files.next();
      QVERIFY2(!file.contains(QStringLiteral(".tmp-")) && !file.endsWith(QStringLiteral(".part")),
               qPrintable(file));
    }
    // The painted labels were saved.
    const sapiens::LabelSet saved = sapiens::openLabelSet(setFolder.toStdString());
    QVERIFY(sameMask(sapiens::readFrameLabels(saved, 0).mask, stroke));
  }

  // The GUI thread never waits on the label set's files: importing 50 pictures (each decoded and checked)
  // and an autosave leave no gap over 100 ms in its event loop.
  void importAndAutosaveDoNotStallTheGui() {
    QTemporaryDir dir;
    const QString source = dir.filePath(QStringLiteral("official"));
    QVERIFY(QDir().mkpath(source + "/images") && QDir().mkpath(source + "/masks"));
    cv::Mat picture(768, 1024, CV_8UC3);
    cv::randu(picture, 0, 255);  // noise: slow to decode, as photos are
    for (int i = 0; i < 50; ++i) {
      const std::string stem = "frame" + std::to_string(i);
      QVERIFY(cv::imwrite(source.toStdString() + "/images/" + stem + ".png", picture));
      QVERIFY(cv::imwrite(source.toStdString() + "/masks/" + stem + ".png",
                          cv::Mat(768, 1024, CV_8UC1, cv::Scalar(i % 29))));
    }
    FineTunePanel panel;
    panel.resize(900, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setAutosaveDelay(50);

    sapiens::test::EventLoopGaps gaps;
    QSignalSpy imported(&panel, &FineTunePanel::importFinished);
    QSignalSpy shown(&panel, &FineTunePanel::frameShown);
    QVERIFY(panel.importOfficialSegLayout(source, dir.filePath(QStringLiteral("set"))));
    QVERIFY(imported.wait(60000));
    QVERIFY2(imported.first().at(0).toBool(), qPrintable(panel.message()));
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{50});
    const qint64 importMs = gaps.elapsed();
    QVERIFY(shown.wait(kTimeoutMs) || panel.currentFrame() == 0);
    QSignalSpy autosaved(&panel, &FineTunePanel::autosaved);
    panel.canvas()->fillAt({10, 10});
    QVERIFY(autosaved.wait(kTimeoutMs));
    gaps.stop();
    const qint64 longestGap = gaps.longestGap();
    qInfo("import of 50 pictures %lld ms, then an autosave; longest GUI-thread gap %lld ms", importMs,
          longestGap);
    QVERIFY2(importMs > 200, "the import was too short for the probe to mean anything");
    QVERIFY2(longestGap < 100,
             qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(longestGap)));
  }

  // Add Picture on Display with a 12-megapixel picture (its PNG takes a while to encode): the frame is in the
  // set and on show at once, its picture, mask and the manifest reach the disk off the GUI thread.
  void addingALargePictureLeavesTheGuiThreadFree() {
    QTemporaryDir dir;
    FineTunePanel panel;
    panel.resize(900, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    cv::Mat noise(3000, 4000, CV_8UC3);
    cv::randu(noise, cv::Scalar::all(0), cv::Scalar::all(255));
    panel.setCurrentPicture(dir.filePath(QStringLiteral("large.png")), noise);
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    QVERIFY(panel.createLabelSet(setFolder, sapiens::Task::Seg));
    auto* tab = panel.findChild<LabelEditorTab*>();
    QSignalSpy added(tab, &LabelEditorTab::frameAdded);

    sapiens::test::EventLoopGaps gaps;
    QVERIFY2(panel.addCurrentPicture(false), qPrintable(panel.message()));
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{1});
    QCOMPARE(panel.canvas()->mask().cols, 4000);
    QVERIFY(added.wait(60000));
    const qint64 addMs = gaps.elapsed();
    gaps.stop();
    qInfo("adding a 4000x3000 picture took %lld ms; longest GUI-thread gap %lld ms", addMs,
          gaps.longestGap());
    QVERIFY2(addMs > 150, "the write was too short for the probe to mean anything");
    QVERIFY2(gaps.longestGap() < 100,
             qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(gaps.longestGap())));
    const sapiens::LabelSet onDisk = sapiens::openLabelSet(setFolder.toStdString());
    QCOMPARE(onDisk.frames.size(), std::size_t{1});
    const sapiens::FrameLabels frame = sapiens::readFrameLabels(onDisk, 0);
    QCOMPARE(frame.image.cols, 4000);
    QCOMPARE(cv::norm(frame.image, noise, cv::NORM_INF), 0.0);

    // Back to the first frame while a second one is still being written: selecting does not wait for the
    // write (it used to drain the set's writes first). The 12-megapixel frame's display itself takes about
    // 0.1 s of the GUI thread here, added or read.
    QVERIFY2(panel.addCurrentPicture(false), qPrintable(panel.message()));
    QElapsedTimer clock;
    clock.start();
    tab->selectFrame(0);
    const qint64 selectMs = clock.restart();
    QVERIFY(added.wait(60000));
    const qint64 writingAfterMs = clock.elapsed();
    qInfo("selecting frame 1 took %lld ms; the new frame's write went on %lld ms after", selectMs,
          writingAfterMs);
    QVERIFY2(writingAfterMs > 100, "the write ended too soon for the probe to mean anything");
    QVERIFY2(selectMs < 50, qPrintable(QStringLiteral("selecting a frame waited %1 ms").arg(selectMs)));
    QTRY_COMPARE_WITH_TIMEOUT(tab->currentFrame(), 0, kTimeoutMs);
  }

  // A picture that cannot be written (here "images" is a file, not a folder): the error names the cause,
  // the frame leaves the set again, and the manifest lists no frame.
  void aPictureThatCannotBeWrittenLeavesTheSet() {
    QTemporaryDir dir;
    FineTunePanel panel;
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    showTheSampleWithASegSet(panel, setFolder);
    if (QTest::currentTestFailed()) return;
    QFile blocker(QDir(setFolder).filePath(QStringLiteral("images")));
    QVERIFY(blocker.open(QIODevice::WriteOnly));
    blocker.close();
    QVERIFY2(panel.addCurrentPicture(false), qPrintable(panel.message()));
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{1});
    QTRY_VERIFY_WITH_TIMEOUT(panel.message().contains(QStringLiteral("Cannot add the picture")), kTimeoutMs);
    QVERIFY2(panel.message().contains(QStringLiteral("images")), qPrintable(panel.message()));
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{0});
    QVERIFY(panel.saveNow());
    QCOMPARE(sapiens::openLabelSet(setFolder.toStdString()).frames.size(), std::size_t{0});
  }

  // One picture's label file cannot be written (its path is a folder), the next picture's can, both added
  // before either write finished: the manifest the second write saves lists the second frame alone, and
  // the set opens (a listed frame without its files would make it unreadable).
  void aFailedPictureIsNotListedByTheNextOne() {
    QTemporaryDir dir;
    FineTunePanel panel;
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    showTheSampleWithASegSet(panel, setFolder);
    if (QTest::currentTestFailed()) return;
    QVERIFY(QDir(setFolder).mkpath(QStringLiteral("masks/astronaut.png")));
    QVERIFY(panel.addCurrentPicture(false) && panel.addCurrentPicture(false));
    panel.saveNow();  // drains the writes; the failure's report has not run yet
    sapiens::LabelSet onDisk;
    try {
      onDisk = sapiens::openLabelSet(setFolder.toStdString());
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QCOMPARE(onDisk.frames.size(), std::size_t{1});
    QTRY_VERIFY_WITH_TIMEOUT(panel.message().contains(QStringLiteral("Cannot add the picture")), kTimeoutMs);
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{1});
    QCOMPARE(panel.labelSet()->frames[0].image, onDisk.frames[0].image);
  }

  // A failed picture then a good one: frameAdded names the good frame's place in the set once the failed one
  // has left it (0; it said 1, its place when it was added).
  void aFrameAddedAfterAFailedOneHasItsPlaceNow() {
    QTemporaryDir dir;
    FineTunePanel panel;
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    showTheSampleWithASegSet(panel, setFolder);
    if (QTest::currentTestFailed()) return;
    QVERIFY(QDir(setFolder).mkpath(QStringLiteral("masks/astronaut.png")));  // the first frame's label file
    QSignalSpy added(panel.labelEditor(), &LabelEditorTab::frameAdded);
    QVERIFY(panel.addCurrentPicture(false) && panel.addCurrentPicture(false));
    QVERIFY(added.wait(kTimeoutMs));
    QVERIFY2(panel.message().contains(QStringLiteral("Cannot add the picture")), qPrintable(panel.message()));
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{1});
    QCOMPARE(added.size(), 1);
    QCOMPARE(added.first().at(0).toInt(), 0);
    QCOMPARE(sapiens::openLabelSet(setFolder.toStdString()).frames[0].image,
             panel.labelSet()->frames[0].image);
  }

  // Quitting with an edit that cannot be saved (the frame's mask file became a folder, as a full disk or a
  // read-only share would have it): the panel's quit-time save reports it, once. The Labels tab, deleted
  // after the panel's set, lets go of the set first: its own save used to go through the freed set (a
  // second report naming a folder read from freed memory; heap-use-after-free under AddressSanitizer).
  void quittingWithLabelsThatCannotBeSavedReportsThemOnce() {
    QTemporaryDir dir;
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    sapiens::LabelSet labels;
    labels.folder = setFolder.toStdString();
    labels.task = sapiens::Task::Seg;
    sapiens::FrameLabels frame;
    frame.image = cv::Mat(48, 64, CV_8UC3, cv::Scalar(40, 80, 120));
    frame.mask = cv::Mat(48, 64, CV_8UC1, cv::Scalar(sapiens::kIgnoreLabel));
    sapiens::addFrame(labels, "frame0", frame);
    auto* panel = new FineTunePanel;
    QSignalSpy shown(panel, &FineTunePanel::frameShown);
    QVERIFY2(panel->openLabelSetFolder(setFolder), qPrintable(panel->message()));
    QVERIFY(shown.wait(kTimeoutMs));
    QSignalSpy autosaved(panel, &FineTunePanel::autosaved);
    panel->canvas()->fillAt({10, 10});  // an edit (LabelCanvas::edited), not saved yet
    QCOMPARE(cv::countNonZero(panel->canvas()->mask() == 1), 64 * 48);
    const QString mask = QDir(setFolder).filePath(QStringLiteral("masks/frame0.png"));
    QVERIFY(QFile::remove(mask) && QDir().mkpath(mask));
    QSignalSpy messages(panel->labelEditor(), &LabelEditorTab::messageShown);
    // The tab's second save used to go through the freed set: its folder's first bytes, then a heap
    // pointer, named a folder that it created in the working directory (one appeared in the repository
    // root). Nothing is written outside the set.
    const QTemporaryDir workingDir;
    const QString previous = QDir::currentPath();
    QVERIFY(QDir::setCurrent(workingDir.path()));
    delete panel;
    QVERIFY(QDir::setCurrent(previous));
    const QStringList created = takeEntries(workingDir.path());
    QVERIFY2(created.isEmpty(),
             qPrintable(QStringLiteral("created in the working directory: ") + created.join(", ")));
    QCOMPARE(autosaved.size(), 0);
    QCOMPARE(messages.size(), 1);
    const QString message = messages.first().at(0).toString();
    QVERIFY2(message.startsWith(QStringLiteral("Cannot save the labels of frame 1: ")) &&
                 message.contains(QStringLiteral("frame0.png")),
             qPrintable(message));
  }

  // Closing the window during an import of 200 pictures asks first, naming the import; Stop and Quit
  // abandons it before its next picture: the window is gone within 2 s of the click (it waited for the
  // whole import without asking), the set is not all there, and no temporary file is left.
  void quittingDuringAnImportAsksAndAbandonsIt() {
    QTemporaryDir dir;
    const QString source = dir.filePath(QStringLiteral("coco"));
    writeCocoPictures(source, 200);
    if (QTest::currentTestFailed()) return;
    auto* window = new MainWindow;
    window->show();
    QVERIFY(QTest::qWaitForWindowExposed(window));
    child<QAction>(window, "actionTogglefineTuningDock")->trigger();
    auto* panel = window->findChild<FineTunePanel*>();
    QSignalSpy imported(panel, &FineTunePanel::importFinished);
    const QString destination = dir.filePath(QStringLiteral("set"));
    QVERIFY(panel->importCocoKeypoints(source + QStringLiteral("/coco.json"),
                                       source + QStringLiteral("/images"), destination));
    QCOMPARE(panel->workUnderWay(), QStringList{QStringLiteral("a label import")});
    window->close();
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = window->findChild<QMessageBox*>(QStringLiteral("quitDialog"))) && box->isVisible());
    QVERIFY2(box->text().contains(QStringLiteral("a label import")), qPrintable(box->text()));
    QVERIFY(imported.isEmpty());  // still importing
    QElapsedTimer gone;
    gone.start();
    QTest::mouseClick(child<QPushButton>(box, "stopAndQuit"), Qt::LeftButton);
    QTRY_VERIFY(!window->isVisible());
    delete window;
    const qint64 quitMs = gone.elapsed();
    qInfo("quitting during an import of 200 pictures took %lld ms", quitMs);
    QVERIFY2(quitMs < 2000, qPrintable(QString::number(quitMs)));
    QSettings().clear();  // the window saved its layout (the dock shown) on closing
    QVERIFY(imported.isEmpty() || !imported.first().at(0).toBool());
    if (QFileInfo::exists(destination + QStringLiteral("/labelset.json")))
      QVERIFY(sapiens::openLabelSet(destination.toStdString()).frames.size() < 200);
    QDirIterator files(destination, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (files.hasNext()) {
      const QString file = files.next();
      QVERIFY2(!file.contains(QStringLiteral(".tmp-")), qPrintable(file));
    }
  }

  // Stop and Quit while the backbone features are computed interrupts the pass between its layers: the run
  // ends as stopped, not as "Fine-tuning failed: the forward pass was interrupted", and no failure dialog
  // opens.
  void quittingInABackbonePassStopsTheRun() {
    QTemporaryDir dir;
    FineTunePanel panel;
    const std::string sample = sapiens::test::resource("samples/astronaut.png");
    panel.setCurrentPicture(QString::fromStdString(sample), cv::imread(sample, cv::IMREAD_COLOR));
    const QString setFolder = dir.filePath(QStringLiteral("set"));
    writeOverfittingSet(panel, setFolder);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(panel.openLabelSetFolder(setFolder), qPrintable(panel.message()));
    child<QLineEdit>(&panel, "fineTuneBaseModel")->setText(fixtureModel("seg"));
    // A large input: each sample's backbone pass takes a while, so a quit lands in one.
    child<QLineEdit>(&panel, "fineTuneInputSize")->setText(QStringLiteral("1536x1152"));
    panel.startTraining();
    auto* stats = child<QLabel>(&panel, "fineTuneStats");
    // The first sample's features are done: the worker is in the second sample's pass.
    QTRY_VERIFY_WITH_TIMEOUT(stats->text().startsWith(QStringLiteral("Computing backbone features: 1 of")),
                             kInferenceTimeoutMs);
    QElapsedTimer clock;
    clock.start();
    panel.stopForQuitting();
    QTRY_VERIFY_WITH_TIMEOUT(!isRunning(panel.trainingState()), kTimeoutMs);
    qInfo("the run ended %lld ms after the quit", clock.elapsed());
    QCOMPARE(panel.trainingState(), State::Stopped);
    QVERIFY2(!panel.message().contains(QStringLiteral("failed")), qPrintable(panel.message()));
    QVERIFY(!panel.findChild<QMessageBox*>(QStringLiteral("failureDialog")));
  }

  // "Start from prediction" with the seg result on display, then the eraser, flood fill and polygon tools
  // with the mouse: each edit changes exactly the pixels the tool promises, and undo puts every pixel back.
  void segToolsCorrectAPrediction() {
    QTemporaryDir dir;
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy shown(&window, &MainWindow::imageShown);
    window.openPaths({QString::fromStdString(sapiens::test::resource("samples/astronaut.png"))});
    QVERIFY(shown.wait(kTimeoutMs));
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.loadCheckpoint(sapiens::Task::Seg, fixtureModel("seg"));
    QVERIFY(ready.wait(kInferenceTimeoutMs));
    for (sapiens::Task task : sapiens::headTasksInRunOrder())
      window.tasksPanel()->setTaskSelected(task, task == sapiens::Task::Seg);
    QSignalSpy result(&window, &MainWindow::resultShown);
    child<QAction>(&window, "actionRun")->trigger();
    QVERIFY(result.wait(kInferenceTimeoutMs));
    QVERIFY(window.currentResult() && window.currentResult()->has(sapiens::Task::Seg));
    const cv::Mat predicted = window.currentResult()->segLabels.clone();

    child<QAction>(&window, "actionTogglefineTuningDock")->trigger();
    auto* dock = window.findChild<QDockWidget*>(QStringLiteral("fineTuningDock"));
    dock->setFloating(true);
    dock->resize(900, 720);
    QVERIFY(QTest::qWaitForWindowExposed(dock));
    auto* panel = dock->findChild<FineTunePanel*>();
    QVERIFY(panel->createLabelSet(dir.filePath(QStringLiteral("set")), sapiens::Task::Seg));
    QVERIFY(child<QCheckBox>(panel, "fineTuneFromPrediction")->isChecked());
    QTest::mouseClick(child<QPushButton>(panel, "fineTuneAddPicture"), Qt::LeftButton);
    sapiens::widgets::LabelCanvas* canvas = panel->canvas();
    QCOMPARE(canvas->mode(), sapiens::widgets::LabelCanvas::Mode::Seg);
    QVERIFY2(sameMask(canvas->mask(), predicted), qPrintable(panel->message()));
    QVERIFY(labelled(predicted) == predicted.rows * predicted.cols);
    auto at = [&](double x, double y) { return canvas->widgetPoint({x + 0.5, y + 0.5}).toPoint(); };
    QUndoStack* undo = canvas->undoStack();

    // Eraser, radius 5, along row 300 from x = 100 to 200: that band becomes "not labelled", nothing else.
    child<QSpinBox>(panel, "fineTuneBrushSize")->setValue(5);
    clickAction(panel, "actionLabelEraser");
    QTest::mousePress(canvas, Qt::LeftButton, {}, at(100, 300));
    for (int x = 125; x <= 200; x += 25) QTest::mouseMove(canvas, at(x, 300));
    QTest::mouseRelease(canvas, Qt::LeftButton, {}, at(200, 300));
    const cv::Mat erased = canvas->mask().clone();
    const cv::Mat changed = erased != predicted;
    const int erasedCount = cv::countNonZero(changed);
    QVERIFY2(erasedCount > 700 && erasedCount < 1300, qPrintable(QString::number(erasedCount)));
    QCOMPARE(cv::countNonZero(changed & (erased != sapiens::kIgnoreLabel)), 0);
    const cv::Rect band = cv::boundingRect(changed);
    QVERIFY2(
        band.x >= 93 && band.br().x <= 208 && band.y >= 293 && band.br().y <= 308,
        qPrintable(QStringLiteral("%1,%2 %3x%4").arg(band.x).arg(band.y).arg(band.width).arg(band.height)));

    // Flood fill in class 5 inside the erased band: exactly its 4-connected region changes.
    child<QListWidget>(panel, "fineTuneClasses")->setCurrentRow(5);
    clickAction(panel, "actionLabelFill");
    cv::Mat expected = erased.clone();
    cv::floodFill(expected, cv::Point(150, 300), cv::Scalar(5), nullptr, cv::Scalar(0), cv::Scalar(0), 4);
    QTest::mouseClick(canvas, Qt::LeftButton, {}, at(150, 300));
    QVERIFY(sameMask(canvas->mask(), expected));
    QCOMPARE(cv::countNonZero(canvas->mask() == sapiens::kIgnoreLabel), 0);
    const cv::Mat filled = expected.clone();

    // Polygon in class 7: four clicks, then a click on the first vertex closes it.
    child<QListWidget>(panel, "fineTuneClasses")->setCurrentRow(7);
    clickAction(panel, "actionLabelPolygon");
    // The picture pixels the clicks land on, as the canvas maps them back (below 1:1 zoom a widget pixel
    // may not hit the intended picture pixel).
    std::vector<cv::Point> corners;
    for (const cv::Point& c : std::vector<cv::Point>{{250, 100}, {400, 120}, {380, 260}, {260, 240}}) {
      const QPoint click = at(c.x, c.y);
      QTest::mouseClick(canvas, Qt::LeftButton, {}, click);
      const QPointF picture = canvas->imagePoint(click);
      corners.emplace_back(int(std::floor(picture.x())), int(std::floor(picture.y())));
    }
    QVERIFY(sameMask(canvas->mask(), expected));  // nothing filled before the polygon is closed
    QTest::mouseClick(canvas, Qt::LeftButton, {}, at(corners[0].x, corners[0].y));
    cv::fillPoly(expected, std::vector<std::vector<cv::Point>>{corners}, cv::Scalar(7));
    QVERIFY(sameMask(canvas->mask(), expected));
    QVERIFY(cv::countNonZero(canvas->mask() == 7) > 15000);

    // Three edits on the stack; undoing them all gives the prediction back, redoing them the result.
    QCOMPARE(undo->count(), 3);
    clickAction(panel, "actionLabelUndo");
    QVERIFY(sameMask(canvas->mask(), filled));
    clickAction(panel, "actionLabelUndo");
    QVERIFY(sameMask(canvas->mask(), erased));
    clickAction(panel, "actionLabelUndo");
    QVERIFY(sameMask(canvas->mask(), predicted));
    for (int i = 0; i < 3; ++i) clickAction(panel, "actionLabelRedo");
    QVERIFY(sameMask(canvas->mask(), expected));
    QVERIFY(panel->saveNow());
    const QString maskFile = QDir(panel->labelSet()->folder.c_str())
                                 .filePath(QString::fromStdString(panel->labelSet()->frames[0].mask));
    QVERIFY(sameMask(cv::imread(maskFile.toStdString(), cv::IMREAD_UNCHANGED), expected));
  }

  // Keypoints on the panel alone: place (visible, Shift: hidden), drag, delete, undo, group filters, and
  // the autosaved keypoints file.
  // Import > Dense Targets: pictures paired with .npy targets by name become a normal label set; a target
  // of the wrong size is reported in the panel and the panel keeps its label set.
  void denseTargetsAreImportedAndABadOneIsReported() {
    QTemporaryDir dir;
    const QString images = dir.filePath(QStringLiteral("pictures")),
                  targets = dir.filePath(QStringLiteral("t"));
    QVERIFY(QDir().mkpath(images) && QDir().mkpath(targets));
    const cv::Mat picture = cv::imread(sapiens::test::resource("samples/astronaut.png"), cv::IMREAD_COLOR);
    for (const char* name : {"a", "b"}) {
      QVERIFY(cv::imwrite(QDir(images).filePath(QString(name) + ".png").toStdString(), picture));
      sapiens::writeNpy(QDir(targets).filePath(QString(name) + ".npy").toStdString(),
                        cv::Mat(picture.size(), CV_32FC3, cv::Scalar(0, 0, -1)));
    }
    FineTunePanel panel;
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QSignalSpy imported(&panel, &FineTunePanel::importFinished);
    QVERIFY2(
        panel.importDenseTargets(sapiens::Task::Normal, images, targets, dir.filePath(QStringLiteral("set"))),
        qPrintable(panel.message()));
    QVERIFY(imported.wait(kTimeoutMs));  // off the GUI thread
    QVERIFY2(imported.takeFirst().at(0).toBool(), qPrintable(panel.message()));
    QVERIFY(panel.labelSet() && panel.labelSet()->task == sapiens::Task::Normal);
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{2});
    QCOMPARE(sapiens::readFrameLabels(*panel.labelSet(), 1).target.size(), picture.size());

    sapiens::writeNpy(QDir(targets).filePath(QStringLiteral("b.npy")).toStdString(),
                      cv::Mat(4, 4, CV_32FC3, cv::Scalar(0, 0, -1)));
    QVERIFY(panel.importDenseTargets(sapiens::Task::Normal, images, targets,
                                     dir.filePath(QStringLiteral("set2"))));
    QVERIFY(imported.wait(kTimeoutMs));
    QVERIFY(!imported.takeFirst().at(0).toBool());
    QVERIFY2(panel.message().contains(QStringLiteral("b.npy")), qPrintable(panel.message()));
    QCOMPARE(panel.labelSet()->frames.size(), std::size_t{2});
  }

  void keypointsPlaceDragDeleteAndFilter() {
    QTemporaryDir dir;
    FineTunePanel panel;
    panel.resize(900, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    panel.setAutosaveDelay(100);
    const std::string sample = sapiens::test::resource("samples/astronaut.png");
    panel.setCurrentPicture(QString::fromStdString(sample), cv::imread(sample, cv::IMREAD_COLOR));
    QVERIFY(panel.createLabelSet(dir.filePath(QStringLiteral("pose")), sapiens::Task::Pose));
    QVERIFY2(panel.addCurrentPicture(false), qPrintable(panel.message()));
    sapiens::widgets::LabelCanvas* canvas = panel.canvas();
    QCOMPARE(canvas->mode(), sapiens::widgets::LabelCanvas::Mode::Keypoints);
    QVERIFY(canvas->people().empty());
    QCOMPARE(canvas->currentKeypoint(), 0);  // nose, in the body group shown at first

    auto at = [&](double x, double y) { return canvas->widgetPoint({x, y}).toPoint(); };
    auto keypoint = [&](int index) { return canvas->people().at(0).keypoints.at(std::size_t(index)); };
    QTest::mouseClick(canvas, Qt::LeftButton, {}, at(200, 150));
    QCOMPARE(canvas->people().size(), std::size_t(1));
    QCOMPARE(keypoint(0).visibility, 2);
    QVERIFY(std::abs(keypoint(0).x - 200) < 1.5 && std::abs(keypoint(0).y - 150) < 1.5);
    QCOMPARE(canvas->currentKeypoint(), 1);  // on to the next unlabelled one
    QTest::mouseClick(canvas, Qt::LeftButton, Qt::ShiftModifier, at(230, 140));
    QCOMPARE(keypoint(1).visibility, 1);  // hidden

    // Drag the nose; undo puts it back.
    QTest::mousePress(canvas, Qt::LeftButton, {}, at(keypoint(0).x, keypoint(0).y));
    QTest::mouseMove(canvas, at(240, 170));
    QTest::mouseMove(canvas, at(260, 180));
    QTest::mouseRelease(canvas, Qt::LeftButton, {}, at(260, 180));
    QVERIFY(std::abs(keypoint(0).x - 260) < 1.5 && std::abs(keypoint(0).y - 180) < 1.5);
    canvas->undoStack()->undo();
    QVERIFY(std::abs(keypoint(0).x - 200) < 1.5 && std::abs(keypoint(0).y - 150) < 1.5);
    canvas->undoStack()->redo();

    // Right click deletes; with the body group hidden, its keypoints cannot be hit.
    QTest::mouseClick(canvas, Qt::RightButton, {}, at(keypoint(1).x, keypoint(1).y));
    QCOMPARE(keypoint(1).visibility, 0);
    child<QCheckBox>(&panel, "fineTuneGroupBody")->setChecked(false);
    QVERIFY(!canvas->keypointShown(0));
    QTest::mouseClick(canvas, Qt::RightButton, {}, at(keypoint(0).x, keypoint(0).y));
    QCOMPARE(keypoint(0).visibility, 2);

    // The edits reach the keypoints file.
    QSignalSpy autosaved(&panel, &FineTunePanel::autosaved);
    QVERIFY(autosaved.wait(kTimeoutMs));
    const sapiens::FrameLabels saved = sapiens::readFrameLabels(*panel.labelSet(), 0);
    QCOMPARE(saved.people.size(), std::size_t(1));
    QCOMPARE(saved.people[0].keypoints[0].visibility, 2);
    QVERIFY(std::abs(saved.people[0].keypoints[0].x - 260) < 1.5);
    QCOMPARE(saved.people[0].keypoints[1].visibility, 0);
  }

  // The worker's report of a diverged run (FineTuneWorker::diverged, queued to the panel; the run itself
  // is test_finetune_training's aDivergingRunStopsAndKeepsTheLastFiniteHead): a dialog names the step and
  // the head kept, the message line says it in red, and the run counts as stopped, not failed.
  void aDivergedRunIsExplainedInADialog() {
    FineTunePanel panel;
    panel.resize(700, 700);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QVERIFY(QMetaObject::invokeMethod(&panel, "showDivergence", Qt::QueuedConnection, Q_ARG(int, 7),
                                      Q_ARG(int, 6),
                                      Q_ARG(QString, QStringLiteral("step 7: the training loss is NaN"))));
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = panel.findChild<QMessageBox*>(QStringLiteral("fineTuneDivergedDialog"))) &&
                box->isVisible());
    QVERIFY2(box->text().contains(QStringLiteral("Step 7")) &&
                 box->text().contains(QStringLiteral("after step 6")),
             qPrintable(box->text()));
    QCOMPARE(box->detailedText(), QStringLiteral("step 7: the training loss is NaN"));
    QCOMPARE(panel.trainingState(), FineTunePanel::TrainingState::Stopped);
    QVERIFY2(panel.message().contains(QStringLiteral("diverged at step 7")), qPrintable(panel.message()));
    box->accept();
    QTRY_VERIFY(!panel.findChild<QMessageBox*>(QStringLiteral("fineTuneDivergedDialog")));
    // A run that diverged on its first step keeps the head it started from.
    QVERIFY(QMetaObject::invokeMethod(&panel, "showDivergence", Qt::QueuedConnection, Q_ARG(int, 1),
                                      Q_ARG(int, 0), Q_ARG(QString, QStringLiteral("step 1"))));
    QTRY_VERIFY((box = panel.findChild<QMessageBox*>(QStringLiteral("fineTuneDivergedDialog"))) &&
                box->isVisible());
    QVERIFY2(box->text().contains(QStringLiteral("started from")), qPrintable(box->text()));
    box->accept();
  }

  // How a run is going, on a set that over-fits for sure: the training frame labelled all class 1, the
  // held-out frame (the same picture) all class 2, so every step on the one moves the other away. With the
  // rate left to the range test, the Training tab names the chosen rate and the trials; the held-out
  // frame's prediction is shown before the first step and after; the validation loss, evaluated every
  // step, rises from the start and the over-fitting warning appears (logged once). A given rate is shown
  // as given.
  void trainingShowsTheRateTheBeforeAndAfterAndOverfitting() {
    QTemporaryDir dir;
    FineTunePanel panel;
    panel.resize(900, 900);
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    const std::string sample = sapiens::test::resource("samples/astronaut.png");
    panel.setCurrentPicture(QString::fromStdString(sample), cv::imread(sample, cv::IMREAD_COLOR));
    const QString setFolder = dir.filePath(QStringLiteral("overfit"));
    writeOverfittingSet(panel, setFolder);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(panel.openLabelSetFolder(setFolder), qPrintable(panel.message()));

    std::atomic<int> overfittingLogged{0};
    const int callback = sapiens::log::addCallback([&](sapiens::log::Level level, std::string_view message) {
      if (level == sapiens::log::Level::Warn && message.find("Over-fitting") != std::string_view::npos)
        ++overfittingLogged;
    });
    child<QLineEdit>(&panel, "fineTuneBaseModel")->setText(fixtureModel("seg"));
    child<QLineEdit>(&panel, "fineTuneInputSize")->setText(QStringLiteral("128x96"));
    child<QSpinBox>(&panel, "fineTuneSteps")->setValue(30);  // over-fitting after 3 steps above the best
    child<QSpinBox>(&panel, "fineTuneBatch")->setValue(1);
    child<QSpinBox>(&panel, "fineTuneEvaluateEvery")->setValue(1);
    QCOMPARE(panel.trainingSettings().learningRate, 0.0);  // auto
    panel.startTraining();
    QTRY_COMPARE_WITH_TIMEOUT(panel.trainingState(), State::Finished, kInferenceTimeoutMs);
    sapiens::log::removeCallback(callback);

    auto* tab = panel.trainingTab();
    tabs(panel)->setCurrentWidget(tab);
    const QString rate = child<QLabel>(&panel, "fineTuneLearningRateUsed")->text();
    QCOMPARE(rate, tab->learningRateText());
    QVERIFY2(
        rate.startsWith(QStringLiteral("Learning rate ")) && rate.contains(QStringLiteral("chosen by a "
                                                                                          "range test: "
                                                                                          "3e-04: loss")),
        qPrintable(rate));

    // Before: right after preparing, at step 0; after: the last step's. Both of the held-out frame, at the
    // network input's size, and training changed the prediction.
    const QImage before = panel.previewBeforeImage(), after = panel.previewImage();
    QCOMPARE(before.size(), QSize(96, 128));
    QCOMPARE(after.size(), QSize(96, 128));
    QVERIFY(before != after);
    const sapiens::studio::PredictionPreview* preview = tab->preview();
    QVERIFY2(preview->beforeCaption().contains(QStringLiteral("Before training (step 0)")) &&
                 preview->beforeCaption().contains(QStringLiteral("held-out")),
             qPrintable(preview->beforeCaption()));
    QVERIFY2(preview->afterCaption().contains(QStringLiteral("After step 30")) &&
                 preview->afterCaption().contains(QStringLiteral("held-out")),
             qPrintable(preview->afterCaption()));
    QVERIFY(child<QWidget>(&panel, "fineTunePreviewBefore")->isVisible());
    QVERIFY(child<QWidget>(&panel, "fineTunePreview")->isVisible());

    // The validation loss rose: its best is an early step (4 when measured); the warning is on show and
    // was logged once.
    const QVector<QPointF> validation = panel.lossChart()->points(1);
    QCOMPARE(validation.size(), 30);
    QVERIFY2(validation.back().y() > validation.front().y(),
             qPrintable(QStringLiteral("%1 -> %2").arg(validation.front().y()).arg(validation.back().y())));
    const sapiens::OverfittingMonitor& monitor = tab->overfittingMonitor();
    QVERIFY(monitor.overfitting());
    QVERIFY2(*monitor.bestStep() <= 15, qPrintable(QString::number(*monitor.bestStep())));
    auto* warning = child<QLabel>(&panel, "fineTuneOverfitting");
    QVERIFY(warning->isVisible());
    QVERIFY(!warning->styleSheet().isEmpty());
    QCOMPARE(warning->text(), tab->overfittingWarning());
    QVERIFY2(warning->text().startsWith(QStringLiteral("Over-fitting")) &&
                 warning->text().contains(QStringLiteral("fewer steps")) &&
                 warning->text().contains(QStringLiteral("more frames")) &&
                 warning->text().contains(QStringLiteral("Snapshot every")),
             qPrintable(warning->text()));
    QCOMPARE(overfittingLogged.load(), 1);

    // A given rate: shown as given from the start of the run, and once prepared.
    child<QDoubleSpinBox>(&panel, "fineTuneLearningRate")->setValue(0.01);
    child<QSpinBox>(&panel, "fineTuneSteps")->setValue(3);
    panel.startTraining();
    QCOMPARE(tab->learningRateText(), QStringLiteral("Learning rate 1e-02 (given)"));
    QVERIFY(tab->overfittingWarning().isEmpty());  // a new run
    QVERIFY(panel.previewBeforeImage().isNull() && panel.previewImage().isNull());
    QTRY_COMPARE_WITH_TIMEOUT(panel.trainingState(), State::Finished, kInferenceTimeoutMs);
    QCOMPARE(tab->learningRateText(), QStringLiteral("Learning rate 1e-02 (given)"));
    QVERIFY(!panel.previewBeforeImage().isNull() && !panel.previewImage().isNull());
  }
};

QTEST_MAIN(TestFinetunePanel)
#include "test_finetune_panel.moc"
