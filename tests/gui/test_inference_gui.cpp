// Running the models from the studio as a user does: the bundled sample, the tiny fixture models loaded
// through the Models actions, results drawn as layers over the image (checked on the drawn pixels),
// the 3-D view, File > Export, bad checkpoints reported without a crash, person boxes drawn by the user,
// models reloaded for another precision, and a GUI that never stalls.

#include "cloud_preview.h"
#include "compute_devices.h"
#include "event_loop_gaps.h"
#include "image_view.h"
#include "inference_session.h"
#include "log_panel.h"
#include "main_window.h"
#include "point_cloud_view.h"
#include "sapiens/common/allocator.h"
#include "sapiens/model/compute_options.h"
#include "surface_format.h"
#include "tasks_panel.h"
#include "test_support.h"

#include "sapiens/common/log.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/run/frame_export.h"

#include <opencv2/core.hpp>

#include <vtkNew.h>
#include <vtkPLYReader.h>
#include <vtkPolyData.h>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMouseEvent>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

using sapiens::Task;
using sapiens::studio::MainWindow;

namespace {

constexpr int kTimeoutMs = 120000;

QString samplePath() {
  return QString::fromStdString(sapiens::test::resource("samples/astronaut.png"));
}

QString fixtureModel(const char* task) {
  return QString::fromStdString(sapiens::test::fixture(std::string("golden/") + task + "/model.safetensors"));
}

bool openAndWait(MainWindow& window) {
  QSignalSpy shown(&window, &MainWindow::imageShown);
  window.openPaths({samplePath()});
  return shown.wait(kTimeoutMs);
}

bool loadModels(MainWindow& window, const std::map<Task, const char*>& models) {
  QSignalSpy ready(&window, &MainWindow::modelReady);
  for (const auto& [task, folder] : models) window.loadCheckpoint(task, fixtureModel(folder));
  QElapsedTimer timer;
  timer.start();
  while (ready.count() < int(models.size()) && timer.elapsed() < kTimeoutMs) ready.wait(1000);
  return ready.count() == int(models.size());
}

void selectTasks(MainWindow& window, std::initializer_list<Task> tasks) {
  for (Task task : sapiens::headTasksInRunOrder())
    window.tasksPanel()->setTaskSelected(task, std::find(tasks.begin(), tasks.end(), task) != tasks.end());
}

// The first-run banner above the view goes once every checked task has a model (a lookup that ends
// later may show or hide it); the view's size, and so where a picture point is drawn, is steady after.
bool viewSizeSettled(MainWindow& window) {
  auto* banner = window.findChild<QWidget*>(QStringLiteral("firstRunBanner"));
  if (!banner || !QTest::qWaitFor([&] { return !banner->isVisible(); }, kTimeoutMs)) return false;
  QCoreApplication::sendPostedEvents();
  QCoreApplication::processEvents();
  return true;
}

bool runAndWait(MainWindow& window) {
  QSignalSpy shown(&window, &MainWindow::resultShown);
  window.findChild<QAction*>(QStringLiteral("actionRun"))->trigger();
  return shown.wait(kTimeoutMs);
}

QRgb drawnAt(const QImage& frame, sapiens::widgets::ImageView& view, const QPointF& imagePoint) {
  const QPointF widget = view.imageToWidget(imagePoint);
  const qreal dpr = view.devicePixelRatioF();
  return frame.pixel(int(widget.x() * dpr), int(widget.y() * dpr));
}

int colourDistance(QRgb a, QRgb b) {
  return std::max(
      {std::abs(qRed(a) - qRed(b)), std::abs(qGreen(a) - qGreen(b)), std::abs(qBlue(a) - qBlue(b))});
}

// Image points on a grid whose 5x5 neighbourhood has a single label (away from mask edges).
std::vector<std::pair<QPointF, int>> interiorSamples(const cv::Mat& labels) {
  std::vector<std::pair<QPointF, int>> samples;
  for (int y = 8; y < labels.rows - 8; y += 16) {
    for (int x = 8; x < labels.cols - 8; x += 16) {
      const int label = labels.at<std::uint8_t>(y, x);
      bool uniform = true;
      for (int dy = 0; dy <= 0 && uniform; ++dy)  // the mask texture is sampled nearest: one pixel decides
        for (int dx = 0; dx <= 0 && uniform; ++dx) uniform = labels.at<std::uint8_t>(y + dy, x + dx) == label;
      if (uniform) samples.emplace_back(QPointF(x + 0.5, y + 0.5), label);
    }
  }
  return samples;
}

int nonBackgroundPixels(const QImage& frame) {
  const QRgb corner = frame.pixel(0, 0);
  int count = 0;
  for (int y = 0; y < frame.height(); y += 2)
    for (int x = 0; x < frame.width(); x += 2) count += colourDistance(frame.pixel(x, y), corner) > 30;
  return count;
}

void sendMouse(QWidget* widget, QEvent::Type type, const QPointF& pos, Qt::MouseButton button,
               Qt::MouseButtons buttons, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  QMouseEvent event(type, pos, widget->mapToGlobal(pos), button, buttons, modifiers);
  QApplication::sendEvent(widget, &event);
}

// Shift + drag from image point `from` to `to`, as a user draws a person box.
void drawBox(sapiens::widgets::ImageView& view, const QPointF& from, const QPointF& to) {
  const QPointF a = view.imageToWidget(from);
  const QPointF b = view.imageToWidget(to);
  sendMouse(&view, QEvent::MouseButtonPress, a, Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
  sendMouse(&view, QEvent::MouseMove, (a + b) / 2.0, Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
  sendMouse(&view, QEvent::MouseMove, b, Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
  sendMouse(&view, QEvent::MouseButtonRelease, b, Qt::LeftButton, Qt::NoButton, Qt::ShiftModifier);
}

bool sameBox(const sapiens::BoundingBox& a, const sapiens::BoundingBox& b, float tolerance) {
  return std::abs(a.x1 - b.x1) <= tolerance && std::abs(a.y1 - b.y1) <= tolerance &&
         std::abs(a.x2 - b.x2) <= tolerance && std::abs(a.y2 - b.y2) <= tolerance;
}

// Part mask: hide the most common class; its pixels and the background's stay as they were, the other
// classes' pixels are tinted. Turning the mask layer off gives the original picture back.
void maskLayerTintsAndHides(MainWindow& window, const QImage& original,
                            const std::vector<std::pair<QPointF, int>>& samples) {
  auto* view = window.imageView();
  auto* panel = window.tasksPanel();
  std::map<int, int> frequency;
  for (const auto& [point, label] : samples) ++frequency[label];
  QVERIFY2(frequency.size() >= 2, "the fixture model should give at least two classes on the sample");
  int hidden = 0;
  for (const auto& [label, count] : frequency)
    if (label != 0 && (hidden == 0 || count > frequency[hidden])) hidden = label;
  panel->setClassVisible(hidden, false);
  QImage frame = view->grabFramebuffer();
  int tinted = 0, tintable = 0, untouched = 0, untouchable = 0;
  for (const auto& [point, label] : samples) {
    const int change = colourDistance(drawnAt(frame, *view, point), drawnAt(original, *view, point));
    if (label == 0 || label == hidden) {
      ++untouchable;
      untouched += change <= 3;
    } else {
      ++tintable;
      tinted += change > 3;
    }
  }
  QVERIFY(tintable > 0 && untouchable > 0);
  QVERIFY2(untouched == untouchable, qPrintable(QStringLiteral("%1 of %2").arg(untouched).arg(untouchable)));
  QVERIFY2(tinted >= tintable * 9 / 10, qPrintable(QStringLiteral("%1 of %2").arg(tinted).arg(tintable)));

  // Turning the mask layer off gives the original picture back.
  panel->findChild<QCheckBox*>(QStringLiteral("maskLayerCheck"))->setChecked(false);
  frame = view->grabFramebuffer();
  int restored = 0;
  for (const auto& [point, label] : samples)
    restored += colourDistance(drawnAt(frame, *view, point), drawnAt(original, *view, point)) <= 3;
  QCOMPARE(restored, int(samples.size()));
}

// 3-D: the pointmap's points are on screen, and a drag turns them.
void cloudIsDrawnAndTurns(MainWindow& window, QSignalSpy& cloudShown) {
  const sapiens::FrameResult* result = window.currentResult();
  auto* view = window.imageView();
  if (cloudShown.isEmpty()) QVERIFY(cloudShown.wait(kTimeoutMs));
  auto* cloud = window.pointCloudView();
  const auto expected = sapiens::buildPointCloud(*result, view->image());
  // A dense cloud is drawn thinned on its pixel grid; the export below has every point.
  const auto preview = sapiens::studio::previewCloud(expected, result->width);
  QCOMPARE(qulonglong(cloud->pointCount()), qulonglong(preview.vertexCount()));
  QCOMPARE(cloudShown.at(0).at(0).toULongLong(), qulonglong(preview.vertexCount()));
  QVERIFY(preview.vertexCount() <= sapiens::studio::kMaxPreviewPoints);
  const int stride = sapiens::studio::previewStride(expected.vertexCount());
  QVERIFY2(
      preview.vertexCount() * std::size_t(stride * stride) * 2 >= expected.vertexCount(),
      qPrintable(
          QStringLiteral("%1 of %2 points drawn").arg(preview.vertexCount()).arg(expected.vertexCount())));
  for (std::size_t i = 0, j = 0; i < preview.vertexCount(); ++i) {
    while (j < expected.vertexCount() && expected.pixels[j] != preview.pixels[i]) ++j;
    QVERIFY2(j < expected.vertexCount(), "a drawn point is not a point of the cloud");
    QCOMPARE(preview.positions[i * 3 + 2], expected.positions[j * 3 + 2]);
    QCOMPARE(int(expected.pixels[j] % result->width) % stride, 0);
    QCOMPARE(int(expected.pixels[j] / result->width) % stride, 0);
  }
  QTRY_VERIFY_WITH_TIMEOUT(nonBackgroundPixels(cloud->grabFramebuffer()) > 20, 20000);
  const QImage before3d = cloud->grabFramebuffer();
  QSignalSpy rendered(cloud, &sapiens::widgets::PointCloudView::frameRendered);
  const QPointF centre(cloud->width() / 2.0, cloud->height() / 2.0);
  sendMouse(cloud, QEvent::MouseButtonPress, centre, Qt::LeftButton, Qt::LeftButton);
  for (int dx = 5; dx <= 80; dx += 5)
    sendMouse(cloud, QEvent::MouseMove, centre + QPointF(dx, dx / 2.0), Qt::NoButton, Qt::LeftButton);
  sendMouse(cloud, QEvent::MouseButtonRelease, centre + QPointF(80, 40), Qt::LeftButton, Qt::NoButton);
  QVERIFY(rendered.wait(20000));
  QVERIFY(cloud->grabFramebuffer() != before3d);
}

// The people's skeletons over the cloud: every person with a lifted keypoint brings its 308 keypoints'
// slots, its joints are the keypoints above the threshold with a 3-D point; the dock's toggle hides them.
void skeletonIsDrawnOverTheCloud(MainWindow& window) {
  const sapiens::FrameResult* result = window.currentResult();
  auto* cloud = window.pointCloudView();
  const float threshold = window.tasksPanel()->keypointThreshold();
  std::size_t people = 0, joints = 0;
  for (const sapiens::PoseInstance& pose : result->poses) {
    std::size_t lifted = 0;
    for (std::size_t k = 0; k < pose.keypoints3d.size(); ++k)
      lifted += pose.scores[k] >= threshold && std::isfinite(pose.keypoints3d[k][2]);
    people += lifted > 0;
    joints += lifted;
  }
  QVERIFY(people > 0);
  QCOMPARE(cloud->skeletonPointCount(), people * 308);
  QCOMPARE(cloud->skeletonJointCount(), joints);
  QVERIFY(cloud->skeletonBoneCount() > 0);
  auto* toggle = window.findChild<QCheckBox*>(QStringLiteral("cloudSkeletons"));
  QVERIFY(toggle && toggle->isChecked() && cloud->skeletonsVisible());
  const QImage shown = cloud->grabFramebuffer();
  toggle->setChecked(false);
  QVERIFY(!cloud->skeletonsVisible());
  QTRY_VERIFY_WITH_TIMEOUT(cloud->grabFramebuffer() != shown, 20000);
  toggle->setChecked(true);
  QVERIFY(cloud->skeletonsVisible());
  QTRY_VERIFY_WITH_TIMEOUT(cloud->grabFramebuffer() == shown, 20000);
}

// The 3-D dock's options: a larger point size covers more of the view; colouring by depth changes the
// colours drawn and keeps the camera; File > Save 3-D View As writes a PNG of the view's size.
void cloudOptionsChangeTheDrawing(MainWindow& window, QSignalSpy& cloudShown) {
  auto* cloud = window.pointCloudView();
  auto* size = window.findChild<QSpinBox*>(QStringLiteral("cloudPointSize"));
  auto* coloring = window.findChild<QComboBox*>(QStringLiteral("cloudColoring"));
  QVERIFY(size && coloring);
  QSignalSpy rendered(cloud, &sapiens::widgets::PointCloudView::frameRendered);
  const QImage small = cloud->grabFramebuffer();
  size->setValue(size->value() + 4);
  QCOMPARE(cloud->pointSize(), float(size->value()));
  QTRY_VERIFY_WITH_TIMEOUT(nonBackgroundPixels(cloud->grabFramebuffer()) > nonBackgroundPixels(small), 20000);
  const QImage picture = cloud->grabFramebuffer();
  const auto camera = cloud->cameraPosition();
  cloudShown.clear();
  coloring->setCurrentIndex(coloring->findText(QStringLiteral("Depth")));
  QVERIFY(cloudShown.wait(kTimeoutMs));
  QTRY_VERIFY_WITH_TIMEOUT(cloud->grabFramebuffer() != picture, 20000);
  QVERIFY(cloud->cameraPosition() == camera);
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("view.png"));
  window.findChild<QAction*>(QStringLiteral("actionSaveCloudView"))->trigger();
  QFileDialog* dialog = nullptr;
  QTRY_VERIFY((dialog = window.findChild<QFileDialog*>(QStringLiteral("saveViewDialog"))) &&
              dialog->isVisible());
  Q_EMIT dialog->fileSelected(path);
  dialog->close();
  QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(path), kTimeoutMs);
  QCOMPARE(QImage(path).size(), cloud->grabFramebuffer().size());
  // And the picture view, with its layers, through File > Save View As.
  const QString picturePath = dir.filePath(QStringLiteral("picture-view.png"));
  window.findChild<QAction*>(QStringLiteral("actionSaveView"))->trigger();
  QTRY_VERIFY((dialog = window.findChild<QFileDialog*>(QStringLiteral("saveViewDialog"))) &&
              dialog->isVisible());
  Q_EMIT dialog->fileSelected(picturePath);
  dialog->close();
  QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(picturePath), kTimeoutMs);
  QCOMPARE(QImage(picturePath),
           window.imageView()->grabFramebuffer().convertToFormat(QImage(picturePath).format()));
  coloring->setCurrentIndex(0);
  size->setValue(size->value() - 4);
}

// What `sapiens-cli run` writes too: the same writer, so the same bytes for the same result.
void exportsAreTheCliFiles(MainWindow& window, const QTemporaryDir& out, QSignalSpy& exported) {
  const sapiens::FrameResult* result = window.currentResult();
  auto* view = window.imageView();
  auto* panel = window.tasksPanel();
  sapiens::FrameExportOptions cliOptions;
  cliOptions.keypointThreshold = float(panel->keypointThreshold());
  const std::map<std::string, std::string> cliFiles = sapiens::exportFrame(
      *result, view->image(), out.filePath(QStringLiteral("cli/astronaut")).toStdString(),
      QFileInfo(window.currentFile()).fileName().toStdString(), cliOptions);
  const std::pair<sapiens::studio::ExportKind, const char*> kinds[] = {
      {sapiens::studio::ExportKind::SegOverlayPng, "seg_overlay"},
      {sapiens::studio::ExportKind::CocoKeypointsJson, "pose_coco"},
      {sapiens::studio::ExportKind::PoseOverlayPng, "pose_overlay"}};
  for (const auto& [kind, cliKind] : kinds) {
    QVERIFY(window
                .findChild<QAction*>(QStringLiteral("actionExport_") +
                                     QLatin1String(sapiens::studio::exportKindInfo(kind).id))
                ->isEnabled());
    const sapiens::ResultFile file = sapiens::studio::exportKindInfo(kind).file;
    const QString path =
        out.filePath(QStringLiteral("astronaut") + QString::fromLatin1(sapiens::resultFileInfo(file).suffix));
    exported.clear();
    window.exportResult(kind, path);
    QVERIFY(exported.wait(kTimeoutMs));
    QVERIFY2(exported.at(0).at(1).toString().isEmpty(), qPrintable(exported.at(0).at(1).toString()));
    QFile studioFile(path), cliFile(QString::fromStdString(cliFiles.at(cliKind)));
    QVERIFY(studioFile.open(QIODevice::ReadOnly) && cliFile.open(QIODevice::ReadOnly));
    QVERIFY2(studioFile.readAll() == cliFile.readAll(), cliKind);
  }
}

// Keypoints: at threshold 0 every keypoint inside the picture is drawn, the last one on top; above every
// score, nothing is drawn there any more.
void keypointsAreDrawnAboveTheThreshold(MainWindow& window, const QImage& original) {
  const sapiens::FrameResult* result = window.currentResult();
  auto* view = window.imageView();
  auto* panel = window.tasksPanel();
  panel->setKeypointThreshold(0.0);
  panel->findChild<QCheckBox*>(QStringLiteral("keypointsLayerCheck"))->setChecked(true);
  QImage frame = view->grabFramebuffer();
  const sapiens::PoseInstance& pose = result->poses.back();
  const auto& metadata = sapiens::keypoints308();
  int last = -1;
  for (int i = int(std::min(pose.keypoints.size(), metadata.size())) - 1; i >= 0 && last < 0; --i) {
    const auto& k = pose.keypoints[std::size_t(i)];
    if (k[0] >= 1 && k[1] >= 1 && k[0] < result->width - 1 && k[1] < result->height - 1) last = i;
  }
  QVERIFY(last >= 0);
  const auto& point = pose.keypoints[std::size_t(last)];
  const QRgb drawn = drawnAt(frame, *view, QPointF(point[0], point[1]));
  const auto& colour = metadata.keypointColors[std::size_t(last)];
  QVERIFY2(colourDistance(drawn, qRgb(colour[0], colour[1], colour[2])) <= 12,
           qPrintable(QStringLiteral("keypoint %1 drawn as %2 %3 %4, expected %5 %6 %7")
                          .arg(last)
                          .arg(qRed(drawn))
                          .arg(qGreen(drawn))
                          .arg(qBlue(drawn))
                          .arg(colour[0])
                          .arg(colour[1])
                          .arg(colour[2])));
  // Above every score, nothing is drawn there any more.
  panel->setKeypointThreshold(1.0);
  if (*std::max_element(pose.scores.begin(), pose.scores.end()) < 1.0f) {
    frame = view->grabFramebuffer();
    QVERIFY(colourDistance(drawnAt(frame, *view, QPointF(point[0], point[1])),
                           drawnAt(original, *view, QPointF(point[0], point[1]))) <= 3);
  }
}

}  // namespace

class TestInferenceGui : public QObject {
  Q_OBJECT

 public:
  static void initMain() {
    sapiens::memory::keepLargeBlocksInHeap();  // as sapiens-studio's main() does, before any thread starts
    sapiens::studio::prepareOpenGl();
  }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("sapiens2-studio-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_inference_gui"));
    QSettings().clear();
    QVERIFY(emptyRoot_.isValid());
    // Nothing is discovered: every model in these tests is one the test loaded.
    qputenv("SAPIENS_CHECKPOINT_ROOT", emptyRoot_.path().toUtf8());
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);
  }

  void init() {
    QSettings().clear();
    // Tasks without a model stay without one (the demo-weights fallback has a test of its own).
    QSettings().setValue(QStringLiteral("models/demoFallback"), false);
  }

  void drawsResultsAsLayersShowsThemIn3dAndExports() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window));
    QVERIFY(loadModels(
        window,
        {{Task::Seg, "seg"}, {Task::Pose, "pose"}, {Task::Normal, "normal"}, {Task::Pointmap, "pointmap"}}));
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("modelLabel"))->text().contains(QStringLiteral("seg:")));

    auto* view = window.imageView();
    auto* panel = window.tasksPanel();
    selectTasks(window, {Task::Seg, Task::Pose, Task::Normal, Task::Pointmap});
    panel->findChild<QCheckBox*>(QStringLiteral("keypointsLayerCheck"))->setChecked(false);
    panel->findChild<QCheckBox*>(QStringLiteral("boxesLayerCheck"))->setChecked(false);
    QVERIFY(viewSizeSettled(window));
    const QImage original = view->grabFramebuffer();
    const QSize viewSize = view->size();
    QVERIFY(!window.findChild<QAction*>(QStringLiteral("actionExport_ply"))->isEnabled());
    QSignalSpy cloudShown(&window, &MainWindow::pointCloudShown);
    QVERIFY(runAndWait(window));
    const sapiens::FrameResult* result = window.currentResult();
    QVERIFY(result);
    for (Task task : {Task::Seg, Task::Pose, Task::Normal, Task::Pointmap}) QVERIFY(result->has(task));
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("latencyLabel"))->text().endsWith(QStringLiteral("ms")));

    QCOMPARE(view->size(), viewSize);  // picture points are compared where they were drawn before the run
    const auto samples = interiorSamples(result->segLabels);
    maskLayerTintsAndHides(window, original, samples);
    if (QTest::currentTestFailed()) return;

    // Normals as a colour layer (made in the background) change the picture over the person.
    QSignalSpy denseShown(&window, &MainWindow::denseLayerShown);
    panel->findChild<QComboBox*>(QStringLiteral("denseLayerCombo"))->setCurrentIndex(1);
    QVERIFY(denseShown.wait(kTimeoutMs));
    const QImage frame = view->grabFramebuffer();
    int normalTinted = 0;
    for (const auto& [point, label] : samples)
      normalTinted +=
          label != 0 && colourDistance(drawnAt(frame, *view, point), drawnAt(original, *view, point)) > 3;
    QVERIFY(normalTinted > 0);
    panel->findChild<QComboBox*>(QStringLiteral("denseLayerCombo"))->setCurrentIndex(0);

    keypointsAreDrawnAboveTheThreshold(window, original);
    if (QTest::currentTestFailed()) return;

    // The hover read-out names the part, the depth and the normal under the cursor.
    const QPointF at = view->imageToWidget(samples.front().first);
    sendMouse(view, QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
    const QString readout = window.findChild<QLabel*>(QStringLiteral("readoutLabel"))->text();
    QVERIFY2(readout.contains(QStringLiteral("depth")) && readout.contains(QStringLiteral("normal")),
             qPrintable(readout));

    cloudIsDrawnAndTurns(window, cloudShown);
    if (QTest::currentTestFailed()) return;
    skeletonIsDrawnOverTheCloud(window);
    if (QTest::currentTestFailed()) return;
    cloudOptionsChangeTheDrawing(window, cloudShown);
    if (QTest::currentTestFailed()) return;
    const auto expected = sapiens::buildPointCloud(*result, view->image());

    // File > Export > Point Cloud (PLY), through the menu action and its file dialog.
    QAction* exportPly = window.findChild<QAction*>(QStringLiteral("actionExport_ply"));
    QVERIFY(exportPly->isEnabled());
    QTemporaryDir out;
    QVERIFY(out.isValid());
    const QString plyPath = out.filePath(QStringLiteral("astronaut.ply"));
    QSignalSpy exported(&window, &MainWindow::exportFinished);
    exportPly->trigger();
    QFileDialog* dialog = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        (dialog = window.findChild<QFileDialog*>(QStringLiteral("exportDialog"))) != nullptr, 5000);
    dialog->selectFile(plyPath);
    static_cast<QDialog*>(dialog)->accept();  // QFileDialog::accept is protected; QDialog's is public
    QVERIFY(exported.wait(kTimeoutMs));
    QCOMPARE(exported.at(0).at(0).toString(), plyPath);
    QVERIFY2(exported.at(0).at(1).toString().isEmpty(), qPrintable(exported.at(0).at(1).toString()));
    vtkNew<vtkPLYReader> reader;
    reader->SetFileName(plyPath.toStdString().c_str());
    reader->Update();
    QCOMPARE(qulonglong(reader->GetOutput()->GetNumberOfPoints()), qulonglong(expected.vertexCount()));

    // The mask PNG the same way, through the function the dialog calls.
    const QString maskPath = out.filePath(QStringLiteral("astronaut.seg.png"));
    window.exportResult(sapiens::studio::ExportKind::MaskPng, maskPath);
    QVERIFY(exported.wait(kTimeoutMs));
    QVERIFY(QFile::exists(maskPath));

    exportsAreTheCliFiles(window, out, exported);
  }

  void reportsBadCheckpointsAndKeepsWorking() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window));

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString corrupt = dir.filePath(QStringLiteral("corrupt_seg.safetensors"));
    QFile file(corrupt);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray("\x40\x00\x00\x00\x00\x00\x00\x00{not json at all", 24));
    file.close();

    QSignalSpy problems(&window, &MainWindow::modelProblem);
    window.loadCheckpoint(Task::Seg, corrupt);
    QVERIFY(problems.wait(kTimeoutMs));
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("corrupt_seg.safetensors")));
    QTRY_VERIFY_WITH_TIMEOUT(window.logPanel()->toPlainText().contains(QStringLiteral("corrupt_seg")), 5000);

    // The pose fixture offered as the segmentation model is refused.
    window.loadCheckpoint(Task::Seg, fixtureModel("pose"));
    QVERIFY(problems.wait(kTimeoutMs));
    QVERIFY2(problems.at(1).at(1).toString().contains(QStringLiteral("pose")),
             qPrintable(problems.at(1).at(1).toString()));

    // Running without a seg model says so; then the right file works.
    selectTasks(window, {Task::Seg});
    QSignalSpy failed(&window, &MainWindow::runFailed);
    window.runTasks();
    QVERIFY(failed.wait(kTimeoutMs));
    QVERIFY(loadModels(window, {{Task::Seg, "seg"}}));
    QVERIFY(runAndWait(window));
    QVERIFY(window.currentResult()->has(Task::Seg));
  }

  void drawingAPersonBoxRunsPoseInTheUsersBoxes() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window));
    QVERIFY(loadModels(window, {{Task::Seg, "seg"}, {Task::Pose, "pose"}}));
    selectTasks(window, {Task::Seg, Task::Pose});
    QVERIFY(runAndWait(window));
    const std::vector<sapiens::PoseInstance> automatic = window.currentResult()->poses;
    QVERIFY(!automatic.empty());
    for (const auto& pose : automatic) QVERIFY(pose.bboxSource != "user");
    const cv::Mat labels = window.currentResult()->segLabels;

    // Shift + drag: pose runs again in the boxes on screen plus the new one, all the user's now; the
    // segmentation stays.
    auto* view = window.imageView();
    QSignalSpy shown(&window, &MainWindow::resultShown);
    drawBox(*view, {40, 60}, {300, 420});
    QVERIFY(shown.wait(kTimeoutMs));
    const sapiens::FrameResult* result = window.currentResult();
    QCOMPARE(result->poses.size(), automatic.size() + 1);
    for (const auto& pose : result->poses) QCOMPARE(pose.bboxSource, std::string("user"));
    for (std::size_t i = 0; i < automatic.size(); ++i)
      QVERIFY(sameBox(result->poses[i].bbox, automatic[i].bbox, 0.0f));
    const sapiens::BoundingBox drawn{40, 60, 300, 420};
    QVERIFY2(sameBox(result->poses.back().bbox, drawn, 1.0f),
             qPrintable(QStringLiteral("%1 %2 %3 %4")
                            .arg(double(result->poses.back().bbox.x1))
                            .arg(double(result->poses.back().bbox.y1))
                            .arg(double(result->poses.back().bbox.x2))
                            .arg(double(result->poses.back().bbox.y2))));
    QVERIFY(result->has(Task::Seg));
    QCOMPARE(cv::countNonZero(result->segLabels != labels), 0);
    QCOMPARE(view->poses().size(), result->poses.size());
    // The new box's keypoints are those of a crop of that box: at least one lies inside it.
    const auto& keypoints = result->poses.back().keypoints;
    QVERIFY(std::any_of(keypoints.begin(), keypoints.end(), [&](const std::array<double, 2>& k) {
      return k[0] >= drawn.x1 && k[0] <= drawn.x2 && k[1] >= drawn.y1 && k[1] <= drawn.y2;
    }));

    // Select the drawn box and press Delete: pose runs in the others only.
    view->selectBox(int(result->poses.size()) - 1);
    view->setFocus();
    QTest::keyClick(view, Qt::Key_Delete);
    QVERIFY(shown.wait(kTimeoutMs));
    result = window.currentResult();
    QCOMPARE(result->poses.size(), automatic.size());
    for (const auto& pose : result->poses) {
      QCOMPARE(pose.bboxSource, std::string("user"));
      QVERIFY(!sameBox(pose.bbox, drawn, 1.0f));
    }

    // Running all tasks again keeps the user's boxes for this image.
    window.inference()->clearCache();
    QVERIFY(runAndWait(window));
    QCOMPARE(window.currentResult()->poses.size(), automatic.size());
    for (const auto& pose : window.currentResult()->poses) QCOMPARE(pose.bboxSource, std::string("user"));
  }

  void givesFreedMemoryBackWhenIdle() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window));
    QVERIFY(loadModels(window, {{Task::Seg, "seg"}}));
    selectTasks(window, {Task::Seg});
    window.inference()->setIdleReleaseDelay(300);
    QSignalSpy released(window.inference(), &sapiens::studio::InferenceSession::memoryReleased);
    QVERIFY(runAndWait(window));
    // The heap kept the run's activations for the next run; idle, the session gives them back.
    QVERIFY(released.wait(kTimeoutMs));
    QVERIFY2(released.at(0).at(0).toLongLong() > (1 << 20), qPrintable(released.at(0).at(0).toString()));
  }

  void changingThePrecisionReloadsTheModelsInTheBackground() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window));
    QVERIFY(loadModels(window, {{Task::Seg, "seg"}}));
    auto* deviceLabel = window.findChild<QLabel*>(QStringLiteral("deviceLabel"));
    auto* dtypes = window.findChild<QComboBox*>(QStringLiteral("dtypeCombo"));
    const QStringList devices = sapiens::studio::availableDevices();
    if (devices.size() == 1) {
      // The CPU's auto: what the core chose (fp32 without native bf16), shown once loaded.
      QCOMPARE(dtypes->currentText(), QStringLiteral("auto"));
      QVERIFY(dtypes->isEnabled());
      const QString chosen =
          QString::fromStdString(sapiens::computeDtypeName(sapiens::cpuAutoPrecision().dtype));
      QVERIFY2(deviceLabel->text().endsWith(chosen), qPrintable(deviceLabel->text()));
    }

    QSignalSpy ready(&window, &MainWindow::modelReady);
    if (devices.size() > 1) {
      window.setCompute(devices.at(1), QStringLiteral("bf16"));  // what the Compute toolbar does
    } else {
      dtypes->setCurrentText(QStringLiteral("bf16"));  // the toolbar offers bf16 on the CPU
    }
    QVERIFY(ready.wait(kTimeoutMs));
    QCOMPARE(ready.at(0).at(0).value<Task>(), Task::Seg);
    QCOMPARE(window.inference()->models().at(Task::Seg).dtype, QStringLiteral("bf16"));
    QVERIFY2(deviceLabel->text().endsWith(QStringLiteral("bf16")), qPrintable(deviceLabel->text()));
    selectTasks(window, {Task::Seg});
    QVERIFY(runAndWait(window));
    QVERIFY(window.currentResult()->has(Task::Seg));
    QVERIFY2(deviceLabel->text().endsWith(QStringLiteral("bf16")), qPrintable(deviceLabel->text()));
  }

  void staysResponsiveWhileModelsRun() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window));
    QVERIFY(loadModels(
        window,
        {{Task::Seg, "seg"}, {Task::Pose, "pose"}, {Task::Normal, "normal"}, {Task::Pointmap, "pointmap"}}));
    selectTasks(window, {Task::Seg, Task::Pose, Task::Normal, Task::Pointmap});

    sapiens::test::EventLoopGaps gaps;
    QElapsedTimer running;
    running.start();
    for (int i = 0; i < 4; ++i) {
      window.inference()->clearCache();  // a real run each time
      QVERIFY(runAndWait(window));
    }
    gaps.stop();
    const qint64 longestGap = gaps.longestGap();
    const qint64 runMs = running.elapsed();
    qInfo("4 runs took %lld ms; longest GUI-thread gap %lld ms", runMs, longestGap);
    QVERIFY2(runMs > 200, "the runs were too short for the probe to mean anything");
    QVERIFY2(longestGap < 100,
             qPrintable(QStringLiteral("the GUI thread stalled for %1 ms").arg(longestGap)));

    // Moving to another image drops the run in flight: its result never shows.
    window.inference()->clearCache();
    QSignalSpy shown(&window, &MainWindow::resultShown);
    QSignalSpy imageShown(&window, &MainWindow::imageShown);
    window.runTasks();
    window.showFile(samplePath());
    QVERIFY(imageShown.wait(kTimeoutMs));
    QTRY_VERIFY_WITH_TIMEOUT(!window.inference()->isBusy(), kTimeoutMs);
    QTest::qWait(200);
    QVERIFY(shown.isEmpty());
    QVERIFY(!window.currentResult());
  }

 private:
  QTemporaryDir emptyRoot_;
};

QTEST_MAIN(TestInferenceGui)
#include "test_inference_gui.moc"
