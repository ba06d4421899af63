// The Motion dock as a user meets it: a person walks across a short video (the bundled sample, boxes from
// a file so that the untrained fixture models pose one person per frame); played with Pose and Pointmap,
// Analyse charts the chosen joint angle of the person's track over the frames' times, raw and filtered,
// one point per sample with a value; another angle redraws the curves; the cursor follows the frame on
// display; a click in the plot goes to the nearest sample's frame; the chart saves as a PNG. With Pose
// alone there are no 3-D keypoints: the dock says to run Pointmap and draws nothing.

#include "main_window.h"
#include "media_player.h"
#include "motion_dock.h"
#include "tasks_panel.h"
#include "test_support.h"
#include "walking_video.h"

#include "sapiens/common/log.h"
#include "sapiens/media/video_writer.h"

#include <QAbstractSeries>
#include <QAction>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <vector>

using sapiens::Task;
using sapiens::studio::MainWindow;
using sapiens::studio::MotionDock;

using sapiens::test::writeWalkingBoxes;
using sapiens::test::writeWalkingSample;

namespace {

constexpr int kTimeoutMs = 60000;
constexpr int kFrames = 20;
constexpr double kFps = sapiens::test::kWalkFps;

QString fixtureModel(const char* task) {
  return QString::fromStdString(sapiens::test::fixture(std::string("golden/") + task + "/model.safetensors"));
}

// The chart's line series named `name`, in the order they were added.
std::vector<QLineSeries*> seriesNamed(QChart* chart, const QString& name) {
  std::vector<QLineSeries*> out;
  for (QAbstractSeries* series : chart->series())
    if (series->name() == name) out.push_back(qobject_cast<QLineSeries*>(series));
  return out;
}

QList<QPointF> pointsOf(QChart* chart, const QString& name) {
  QList<QPointF> points;
  for (QLineSeries* series : seriesNamed(chart, name)) points += series->points();
  return points;
}

// How many gap-free runs of values `column` of `table` has: a missing value breaks the curve there.
int runsOf(const sapiens::motion::AngleTable& table, std::size_t column) {
  int runs = 0;
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    runs += std::isfinite(table.rows[r][column]) && (r == 0 || !std::isfinite(table.rows[r - 1][column]));
  return runs;
}

// The finite (time, value) samples of `column` in `table`.
QList<QPointF> finiteSamples(const sapiens::motion::AngleTable& table, std::size_t column) {
  QList<QPointF> points;
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    if (std::isfinite(table.rows[r][column])) points.append({table.times.seconds[r], table.rows[r][column]});
  return points;
}

}  // namespace

class TestMotionDock : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("sapiens2-studio-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_motion_dock"));
    QVERIFY(dir_.isValid());
    qputenv("SAPIENS_CHECKPOINT_ROOT", dir_.filePath(QStringLiteral("no-checkpoints")).toUtf8());
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);
    video_ = writeWalkingSample(dir_.path(), kFrames);
    boxes_ = writeWalkingBoxes(dir_.path(), kFrames);
  }

  void init() {
    QSettings().clear();
    QSettings().setValue(QStringLiteral("models/demoFallback"), false);  // only the models loaded here
  }

  void chartsTheWalkersAnglesAndSeeks() {
    MainWindow window;
    MotionDock* dock = openAndPlay(window, {Task::Pose, Task::Pointmap}, true);
    QVERIFY(dock);
    auto* status = dock->findChild<QLabel*>(QStringLiteral("motionStatus"));
    QVERIFY2(status->text().contains(QStringLiteral("%1 frames").arg(kFrames)), qPrintable(status->text()));

    QElapsedTimer timer;
    timer.start();
    QSignalSpy analysed(dock, &MotionDock::analysed);
    QTest::mouseClick(dock->findChild<QPushButton*>(QStringLiteral("motionAnalyse")), Qt::LeftButton);
    QVERIFY(analysed.wait(kTimeoutMs));
    qInfo("analysis of %d frames: %lld ms", kFrames, timer.elapsed());
    QCOMPARE(analysed.last().at(0).toString(), QString());

    // The track chooser lists the tracks the window saw; the walker's track covers every frame.
    const std::vector<int> ids = window.videoTracks().trackIds();
    QCOMPARE(ids.size(), std::size_t(1));
    auto* track = dock->findChild<QComboBox*>(QStringLiteral("motionTrack"));
    QCOMPARE(track->count(), 1);
    QCOMPARE(track->itemData(0).toInt(), ids.front());
    const sapiens::motion::TrackMotion& motion = dock->analysis()->motions.at(ids.front());
    QCOMPARE(motion.filteredAngles.times.size(), std::size_t(kFrames));
    for (int i = 0; i < kFrames; ++i) {
      QCOMPARE(motion.filteredAngles.times.frames[std::size_t(i)], std::int64_t(i));
      QVERIFY(std::abs(motion.filteredAngles.times.seconds[std::size_t(i)] - i / kFps) < 1e-3);
    }

    auto* angle = dock->findChild<QComboBox*>(QStringLiteral("motionAngle"));
    auto* chartView = dock->findChild<QChartView*>(QStringLiteral("motionChart"));
    QVERIFY(angle && chartView);
    QCOMPARE(angle->count(), int(motion.filteredAngles.names.size()));
    const QList<QPointF> firstFiltered =
        curvesMatchTheTable(chartView->chart(), motion, angle->currentIndex());
    if (QTest::currentTestFailed()) return;

    // Another angle with values redraws both curves from its own column.
    int other = -1;
    for (int a = 0; a < angle->count() && other < 0; ++a)
      if (a != angle->currentIndex() && finiteSamples(motion.filteredAngles, std::size_t(a)).size() > 0 &&
          finiteSamples(motion.filteredAngles, std::size_t(a)) != firstFiltered)
        other = a;
    QVERIFY(other >= 0);
    angle->setCurrentIndex(other);
    QVERIFY(pointsOf(chartView->chart(), QStringLiteral("filtered")) != firstFiltered);
    curvesMatchTheTable(chartView->chart(), motion, other);
    if (QTest::currentTestFailed()) return;

    cursorFollowsAndClickSeeks(window, chartView);
    if (QTest::currentTestFailed()) return;
    savesThePng(dock, chartView);
  }

  void withoutPointmapSaysWhyAndDrawsNothing() {
    MainWindow window;
    MotionDock* dock = openAndPlay(window, {Task::Pose}, false);  // one frame is enough to say why
    QVERIFY(dock);
    QSignalSpy analysed(dock, &MotionDock::analysed);
    QTest::mouseClick(dock->findChild<QPushButton*>(QStringLiteral("motionAnalyse")), Qt::LeftButton);
    QVERIFY(analysed.wait(kTimeoutMs));
    const QString error = analysed.last().at(0).toString();
    QVERIFY2(error.contains(QStringLiteral("Pointmap")), qPrintable(error));
    QCOMPARE(dock->findChild<QLabel*>(QStringLiteral("motionStatus"))->text(), error);
    QVERIFY(!dock->analysis());
    QCOMPARE(dock->findChild<QComboBox*>(QStringLiteral("motionTrack"))->count(), 0);
    QVERIFY(dock->findChild<QChartView*>(QStringLiteral("motionChart"))->chart()->series().isEmpty());
    QVERIFY(!dock->findChild<QPushButton*>(QStringLiteral("motionSavePng"))->isEnabled());
  }

 private:
  // Loads the fixture models (at their native input size: the pointmap fixture runs at no other), checks
  // `tasks`, shows the Motion dock, opens the walk with its boxes and plays it to the end (`toTheEnd`; else
  // only its first frame has results); returns the dock (null when a step failed).
  MotionDock* openAndPlay(MainWindow& window, std::initializer_list<Task> tasks, bool toTheEnd) {
    window.resize(1200, 900);
    window.show();
    if (!QTest::qWaitForWindowExposed(&window)) return nullptr;
    QSignalSpy ready(&window, &MainWindow::modelReady);
    for (Task task : tasks)
      window.loadCheckpoint(task, fixtureModel(task == Task::Pose ? "pose" : "pointmap"));
    while (ready.count() < int(tasks.size()))
      if (!ready.wait(kTimeoutMs)) return nullptr;
    for (Task task : sapiens::headTasksInRunOrder())
      window.tasksPanel()->setTaskSelected(task, std::find(tasks.begin(), tasks.end(), task) != tasks.end());
    window.tasksPanel()->setRunsOnOpen(true);
    window.findChild<QAction*>(QStringLiteral("actionTogglemotionDock"))->trigger();
    auto* dockWidget = window.findChild<QDockWidget*>(QStringLiteral("motionDock"));
    if (!dockWidget || !dockWidget->isVisible()) return nullptr;
    dockWidget->raise();

    QSignalSpy results(&window, &MainWindow::resultShown);
    window.openPaths({video_});
    if (!results.wait(kTimeoutMs)) return nullptr;
    QSignalSpy loaded(&window, &MainWindow::videoBoxesLoaded);
    results.clear();
    window.loadVideoBoxes(boxes_);
    if (!loaded.wait(kTimeoutMs) || !loaded.last().at(1).toString().isEmpty()) return nullptr;
    if (results.isEmpty() && !results.wait(kTimeoutMs)) return nullptr;
    if (!toTheEnd) return window.findChild<MotionDock*>();
    QSignalSpy ended(window.mediaPlayer(), &sapiens::studio::MediaPlayer::ended);
    QElapsedTimer timer;
    timer.start();
    window.findChild<QAction*>(QStringLiteral("actionPlayPause"))->trigger();
    if (!ended.wait(kTimeoutMs * 4)) return nullptr;
    qInfo("played %d frames with results in %lld ms", kFrames, timer.elapsed());
    return window.findChild<MotionDock*>();
  }

  // The raw (grey) and filtered curves are the table's finite samples of `column`, one point each, in
  // time order; returns the filtered points.
  QList<QPointF> curvesMatchTheTable(QChart* chart, const sapiens::motion::TrackMotion& motion, int column) {
    const QList<QPointF> raw = pointsOf(chart, QStringLiteral("raw"));
    const QList<QPointF> filtered = pointsOf(chart, QStringLiteral("filtered"));
    const QList<QPointF> rawSamples = finiteSamples(motion.rawAngles, std::size_t(column));
    const QList<QPointF> filteredSamples = finiteSamples(motion.filteredAngles, std::size_t(column));
    qInfo("%s: %lld raw and %lld filtered points of %d samples",
          motion.filteredAngles.names[std::size_t(column)].c_str(), qlonglong(raw.size()),
          qlonglong(filtered.size()), kFrames);
    [&] {
      QVERIFY(!seriesNamed(chart, QStringLiteral("raw")).empty());
      QVERIFY(!seriesNamed(chart, QStringLiteral("filtered")).empty());
      QVERIFY(filteredSamples.size() >= kFrames / 2);
      QCOMPARE(int(seriesNamed(chart, QStringLiteral("raw")).size()),
               runsOf(motion.rawAngles, std::size_t(column)));
      QCOMPARE(int(seriesNamed(chart, QStringLiteral("filtered")).size()),
               runsOf(motion.filteredAngles, std::size_t(column)));
      QCOMPARE(raw, rawSamples);
      QCOMPARE(filtered, filteredSamples);
      for (const QPointF& p : raw + filtered) QVERIFY(std::isfinite(p.x()) && std::isfinite(p.y()));
      QCOMPARE(seriesNamed(chart, QStringLiteral("raw")).front()->pen().color(), QColor(190, 190, 190));
    }();
    return filtered;
  }

  void cursorFollowsAndClickSeeks(MainWindow& window, QChartView* chartView) {
    QChart* chart = chartView->chart();
    const std::vector<QLineSeries*> cursors = seriesNamed(chart, QStringLiteral("cursor"));
    QCOMPARE(cursors.size(), std::size_t(1));
    QLineSeries* cursor = cursors.front();
    const auto cursorAt = [&](int frame) {
      const QList<QPointF> points = cursor->points();
      return points.size() == 2 && std::abs(points[0].x() - frame / kFps) < 1e-3 &&
             std::abs(points[1].x() - frame / kFps) < 1e-3 && points[0].y() < points[1].y();
    };
    QVERIFY(cursorAt(kFrames - 1));  // playback ended on the last frame
    QSignalSpy shown(&window, &MainWindow::mediaFrameShown);
    window.findChild<QAction*>(QStringLiteral("actionPreviousFrame"))->trigger();
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(shown.last().at(0).toLongLong(), qint64(kFrames - 2));
    QVERIFY(cursorAt(kFrames - 2));

    // A click a little after frame 5's time, in the middle of the plot's height, goes to frame 5.
    const QRectF plot = chart->plotArea();
    const QPointF inChart(chart->mapToPosition(QPointF(5.2 / kFps, 0), cursor).x(), plot.center().y());
    QVERIFY(plot.contains(inChart));
    const QPoint inView = chartView->mapFromScene(chart->mapToScene(inChart));
    shown.clear();
    QTest::mouseClick(chartView->viewport(), Qt::LeftButton, {}, inView);
    QVERIFY(shown.wait(kTimeoutMs));
    QCOMPARE(shown.last().at(0).toLongLong(), qint64(5));
    QTRY_VERIFY_WITH_TIMEOUT(cursorAt(5), kTimeoutMs);
    // Outside the plot (on the axis labels) nothing happens.
    shown.clear();
    QTest::mouseClick(
        chartView->viewport(), Qt::LeftButton, {},
        chartView->mapFromScene(chart->mapToScene(QPointF(plot.left() - 20, plot.center().y()))));
    QTest::qWait(300);
    QVERIFY(shown.isEmpty());
  }

  void savesThePng(MotionDock* dock, QChartView* chartView) {
    const QString path = dir_.filePath(QStringLiteral("knee.png"));
    QSignalSpy saved(dock, &MotionDock::pngSaved);
    QTest::mouseClick(dock->findChild<QPushButton*>(QStringLiteral("motionSavePng")), Qt::LeftButton);
    QFileDialog* dialog = nullptr;
    QTRY_VERIFY((dialog = dock->window()->findChild<QFileDialog*>(QStringLiteral("motionSaveDialog"))) &&
                dialog->isVisible());
    Q_EMIT dialog->fileSelected(path);
    dialog->close();
    QVERIFY(saved.wait(kTimeoutMs));
    QCOMPARE(saved.last().at(1).toString(), QString());
    const QImage png(path, "PNG");
    QVERIFY(!png.isNull());
    QCOMPARE(png.size(), chartView->grab().size());
  }

  QTemporaryDir dir_;
  QString video_;
  QString boxes_;
};

QTEST_MAIN(TestMotionDock)
#include "test_motion_dock.moc"
