// The studio's main window as a user meets it: the bundled sample on screen, menus and shortcuts,
// bad files reported without a crash, folders in the Media dock, recent files, drag and drop, the
// comparison modes and the compute device and precision.

#include "compute_toolbar.h"
#include "first_run_banner.h"
#include "image_view.h"
#include "inference_session.h"
#include "log_panel.h"
#include "main_window.h"
#include "media_browser.h"
#include "model_browser.h"
#include "point_cloud_view.h"
#include "recent_files.h"
#include "sapiens/model/compute_options.h"
#include "surface_format.h"
#include "tasks_panel.h"
#include "test_support.h"

#include "sapiens/common/log.h"

#include <ATen/Context.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAccessible>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QMouseEvent>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidgetItem>
#include <QUrl>

#include <algorithm>
#include <cmath>
#include <tuple>

using sapiens::studio::MainWindow;

namespace {

constexpr int kLoadTimeoutMs = 20000;

QString samplePath() {
  return QString::fromStdString(sapiens::test::resource("samples/astronaut.png"));
}

QMenu* menuTitled(QMainWindow& window, const QString& title) {
  for (QAction* action : window.menuBar()->actions()) {
    if (action->menu() && action->text() == title) return action->menu();
  }
  return nullptr;
}

QStringList actionNames(QMenu* menu) {
  QStringList names;
  for (QAction* action : menu->actions()) {
    names << (action->menu() ? action->menu()->objectName() : action->objectName());
  }
  return names;
}

// Opens `paths` and waits until the window has drawn the first image.
bool openAndWait(MainWindow& window, const QStringList& paths) {
  QSignalSpy shown(&window, &MainWindow::imageShown);
  window.openPaths(paths);
  return shown.wait(kLoadTimeoutMs);
}

// Mean absolute difference per channel between what the view drew and the source image, sampled on
// a grid of image points (bilinear source values at the drawn pixels' centres).
double drawnVersusSource(sapiens::widgets::ImageView& view, const cv::Mat& source, int gridSteps) {
  const QImage frame = view.grabFramebuffer();
  const qreal dpr = view.devicePixelRatioF();
  double total = 0;
  int samples = 0;
  for (int gy = 1; gy < gridSteps; ++gy) {
    for (int gx = 1; gx < gridSteps; ++gx) {
      const QPointF imagePoint(source.cols * gx / double(gridSteps), source.rows * gy / double(gridSteps));
      const QPointF widget = view.imageToWidget(imagePoint);
      const int px = int(widget.x() * dpr);
      const int py = int(widget.y() * dpr);
      const QPointF centre = view.widgetToImage(QPointF((px + 0.5) / dpr, (py + 0.5) / dpr));
      cv::Mat patch;
      cv::getRectSubPix(source, cv::Size(1, 1), cv::Point2f(float(centre.x() - 0.5), float(centre.y() - 0.5)),
                        patch);
      const cv::Vec3b expected = patch.at<cv::Vec3b>(0, 0);
      const QRgb drawn = frame.pixel(px, py);
      total += std::abs(qBlue(drawn) - expected[0]) + std::abs(qGreen(drawn) - expected[1]) +
               std::abs(qRed(drawn) - expected[2]);
      samples += 3;
    }
  }
  return total / samples;
}

// The alpha layer is the matte in grey, opaque, at the picture's size.
// A demo start's log: no error line, and one warning naming every task that runs on the demo weights.
void checkDemoStartLog(const QString& log) {
  QStringList errors, untrained;
  for (const QString& line : log.split(QLatin1Char('\n'))) {
    const QString level = line.mid(10, 8).trimmed();  // "HH:mm:ss  LEVEL   message"
    if (level == QStringLiteral("error")) errors << line;
    if (level == QStringLiteral("warning") && line.contains(QStringLiteral("UNTRAINED"))) untrained << line;
  }
  QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
  const QString tasks = QString::fromStdString(sapiens::taskNames(sapiens::headTasksInRunOrder(), ", "));
  QCOMPARE(untrained.size(), 1);
  QVERIFY2(untrained.first().contains(tasks + QStringLiteral(" run on UNTRAINED")),
           qPrintable(untrained.first()));
}

void checkAlphaLayer(const cv::Mat& layer, const cv::Mat& alpha) {
  QCOMPARE(layer.type(), CV_8UC4);
  QCOMPARE(layer.cols, alpha.cols);
  QCOMPARE(layer.rows, alpha.rows);
  for (const cv::Point at : {cv::Point(0, 0), cv::Point(alpha.cols / 2, alpha.rows / 2),
                             cv::Point(alpha.cols - 1, alpha.rows - 1)}) {
    const cv::Vec4b pixel = layer.at<cv::Vec4b>(at);
    const int expected = int(std::lround(std::clamp(alpha.at<float>(at), 0.0f, 1.0f) * 255.0f));
    QVERIFY2(std::abs(pixel[0] - expected) <= 1 && pixel[0] == pixel[1] && pixel[1] == pixel[2],
             qPrintable(QStringLiteral("alpha %1 drawn as %2").arg(alpha.at<float>(at)).arg(pixel[0])));
    QCOMPARE(int(pixel[3]), 255);
  }
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 public:
  static void initMain() { sapiens::studio::prepareOpenGl(); }

 private Q_SLOTS:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QCoreApplication::setOrganizationName(QStringLiteral("sapiens2-studio-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("test_main_window"));
    QSettings().clear();
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);
  }

  void init() {
    QSettings().clear();
    // Tasks without a model stay without one (the demo-weights fallback has a test of its own).
    QSettings().setValue(QStringLiteral("models/demoFallback"), false);
  }

  void fallsBackToDemoWeightsAndSaysSo() {
    // No checkpoint anywhere (the test's checkpoint root is empty): every task gets the untrained demo
    // weights, and the window says so in its title, the model read-out and the status bar.
    QSettings().setValue(QStringLiteral("models/demoFallback"), true);
    MainWindow window;
    window.setInputScale(0.25);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window, {samplePath()}));
    QTRY_VERIFY_WITH_TIMEOUT(window.windowTitle().contains(QStringLiteral("UNTRAINED demo weights")),
                             kLoadTimeoutMs);
    auto* models = window.findChild<QLabel*>(QStringLiteral("modelLabel"));
    QVERIFY2(models->text().contains(QStringLiteral("seg: sapiens2_demo_seg.safetensors (untrained demo)")),
             qPrintable(models->text()));

    // They run: the sample gets a part mask of its size.
    for (sapiens::Task task : sapiens::headTasksInRunOrder())
      window.tasksPanel()->setTaskSelected(task, task == sapiens::Task::Seg);
    QSignalSpy result(&window, &MainWindow::resultShown);
    window.findChild<QAction*>(QStringLiteral("actionRun"))->trigger();
    QVERIFY(result.wait(kLoadTimeoutMs));
    QVERIFY(window.currentResult());
    QCOMPARE(window.currentResult()->segLabels.cols, window.imageView()->image().cols);

    // A checkpoint the user loads replaces the demo weights of its task.
    const QString fixtureSeg = QString::fromStdString(sapiens::test::fixture("golden/seg/model.safetensors"));
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.loadCheckpoint(sapiens::Task::Seg, fixtureSeg);
    QVERIFY(ready.wait(kLoadTimeoutMs));
    QVERIFY(!models->text().contains(QStringLiteral("seg: sapiens2_demo_seg")));
    QVERIFY(window.windowTitle().contains(QStringLiteral("UNTRAINED")));  // the other tasks still are demo

    // Turned off, the remaining demo tasks have no model again and the mark goes.
    window.findChild<QAction*>(QStringLiteral("actionDemoFallback"))->trigger();
    QVERIFY(!window.windowTitle().contains(QStringLiteral("UNTRAINED")));
    QVERIFY(!models->text().contains(QStringLiteral("demo")));
    QVERIFY(!QSettings().value(QStringLiteral("models/demoFallback")).toBool());
  }

  void aFirstRunShowsTheBannerAndUsesTheFolderChosenThere() {
    // A first run: no checkpoint in the folder, the demo weights not asked for. The window says what is
    // missing instead of running noise; the folder chosen from the banner is used at once.
    QTemporaryDir empty, chosen;
    QSettings().setValue(QStringLiteral("models/checkpointRoot"), empty.path());
    QSettings().remove(QStringLiteral("models/demoFallback"));
    QDir(chosen.path()).mkpath(QStringLiteral("seg"));
    QVERIFY(QFile::copy(QString::fromStdString(sapiens::test::fixture("golden/seg/model.safetensors")),
                        chosen.path() + "/seg/sapiens2_0.4b_seg.safetensors"));
    MainWindow window;
    window.setInputScale(0.25);
    for (sapiens::Task task : sapiens::headTasksInRunOrder())
      window.tasksPanel()->setTaskSelected(task, task == sapiens::Task::Seg || task == sapiens::Task::Albedo);
    window.show();
    QVERIFY(openAndWait(window, {samplePath()}));
    auto* banner = window.findChild<sapiens::studio::FirstRunBanner*>(QStringLiteral("firstRunBanner"));
    QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), kLoadTimeoutMs);
    const QString text = banner->findChild<QLabel*>(QStringLiteral("firstRunText"))->text();
    QVERIFY2(text.contains(QStringLiteral("No checkpoint for seg, albedo")) && text.contains(empty.path()),
             qPrintable(text));
    QCOMPARE(banner->downloadIds(), QStringList{QStringLiteral("seg-0.4b")});  // albedo was never released
    QVERIFY(banner->findChild<QPushButton*>(QStringLiteral("bannerDownload"))
                ->text()
                .contains("(1 file, about "));
    QVERIFY(!window.windowTitle().contains(QStringLiteral("UNTRAINED")));

    QTest::mouseClick(banner->findChild<QPushButton*>(QStringLiteral("bannerChooseFolder")), Qt::LeftButton);
    QFileDialog* folders = nullptr;
    QTRY_VERIFY((folders = window.findChild<QFileDialog*>(QStringLiteral("checkpointFolderDialog"))) &&
                folders->isVisible());
    Q_EMIT folders->fileSelected(chosen.path());  // what choosing the folder and pressing Choose does
    folders->close();
    auto* models = window.findChild<QLabel*>(QStringLiteral("modelLabel"));
    QTRY_VERIFY_WITH_TIMEOUT(models->text().contains(QStringLiteral("seg: sapiens2_0.4b_seg.safetensors")),
                             kLoadTimeoutMs);
    QCOMPARE(QSettings().value(QStringLiteral("models/checkpointRoot")).toString(), chosen.path());
    // Albedo still has none: the banner stays for it alone.
    QTRY_VERIFY(banner->findChild<QLabel*>(QStringLiteral("firstRunText"))
                    ->text()
                    .contains("No checkpoint for albedo</b>"));
    window.tasksPanel()->setTaskSelected(sapiens::Task::Albedo, false);
    QTRY_VERIFY(!banner->isVisible());

    // The next run uses the model found there.
    QSignalSpy result(&window, &MainWindow::resultShown);
    window.findChild<QAction*>(QStringLiteral("actionRun"))->trigger();
    QVERIFY(result.wait(kLoadTimeoutMs));
    QCOMPARE(window.currentResult()->segLabels.cols, window.imageView()->image().cols);
    QVERIFY(!window.windowTitle().contains(QStringLiteral("UNTRAINED")));
  }

  void theBannersDemoWeightsAreLabelledAsSuch() {
    QTemporaryDir empty;
    QSettings().setValue(QStringLiteral("models/checkpointRoot"), empty.path());
    QSettings().remove(QStringLiteral("models/demoFallback"));
    MainWindow window;
    window.show();
    auto* banner = window.findChild<sapiens::studio::FirstRunBanner*>(QStringLiteral("firstRunBanner"));
    QTRY_VERIFY_WITH_TIMEOUT(banner->isVisible(), kLoadTimeoutMs);
    QTest::mouseClick(banner->findChild<QPushButton*>(QStringLiteral("bannerDemoWeights")), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(window.windowTitle().contains(QStringLiteral("UNTRAINED demo weights")),
                             kLoadTimeoutMs);
    QTRY_VERIFY(!banner->isVisible());
    QVERIFY(QSettings().value(QStringLiteral("models/demoFallback")).toBool());
  }

  void aRunOnOpenWaitsForTheDemoWeightsAndShowsEveryTask() {
    // What `scripts/bootstrap demo` starts (`--task ... --run --demo-weights`, the fallback not remembered):
    // all five tasks checked, run on open, no checkpoint. The picture opens while the demo weights are
    // still being looked up; the run waits for them instead of failing, and the window shows every task's
    // result: mask and keypoints, normals and albedo as layers, the pointmap in the 3-D dock. The log
    // says once which tasks run untrained and has no error line.
    MainWindow window;  // at the native input: the pointmap's scale branch runs at no other
    for (sapiens::Task task : sapiens::headTasksInRunOrder())
      window.tasksPanel()->setTaskSelected(task, true);
    window.useDemoWeights();
    window.tasksPanel()->setRunsOnOpen(true);
    QSignalSpy result(&window, &MainWindow::resultShown);
    QSignalSpy failed(&window, &MainWindow::runFailed);
    QSignalSpy cloudShown(&window, &MainWindow::pointCloudShown);
    window.show();
    window.openPaths({samplePath()});
    QTRY_VERIFY_WITH_TIMEOUT(!result.isEmpty() || !failed.isEmpty(), 4 * kLoadTimeoutMs);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
    const sapiens::FrameResult* shown = window.currentResult();
    QVERIFY(shown);
    for (sapiens::Task task : sapiens::headTasksInRunOrder())
      QVERIFY2(shown->has(task), sapiens::taskName(task).data());
    QVERIFY(!shown->poses.empty());
    QVERIFY(window.windowTitle().contains(QStringLiteral("UNTRAINED demo weights")));
    if (cloudShown.isEmpty()) QVERIFY(cloudShown.wait(kLoadTimeoutMs));
    QVERIFY(window.pointCloudView()->pointCount() > 0);
    auto* dense = window.findChild<QComboBox*>(QStringLiteral("denseLayerCombo"));
    QVERIFY(dense);
    for (const QString& layer : {QStringLiteral("Normals"), QStringLiteral("Albedo"),
                                 QStringLiteral("Alpha matte"), QStringLiteral("Cut-out")}) {
      QSignalSpy denseShown(&window, &MainWindow::denseLayerShown);
      dense->setCurrentIndex(dense->findText(layer));
      QVERIFY2(denseShown.wait(kLoadTimeoutMs), qPrintable(layer));
      QVERIFY2(!window.imageView()->colorMapLayer().empty(), qPrintable(layer));
      if (layer == QStringLiteral("Alpha matte"))
        checkAlphaLayer(window.imageView()->colorMapLayer(), shown->alpha);
      if (QTest::currentTestFailed()) return;
    }
    checkDemoStartLog(window.logPanel()->toPlainText());
  }

  void showsTheBundledSample() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window, {samplePath()}));

    QVERIFY2(window.windowTitle().contains(QStringLiteral("astronaut.png")),
             qPrintable(window.windowTitle()));
    QCOMPARE(window.windowTitle(), QStringLiteral("Sapiens2 Studio - astronaut.png"));
    QCOMPARE(window.currentFile(), QFileInfo(samplePath()).absoluteFilePath());

    auto* view = window.imageView();
    QVERIFY(view->fitsToView());
    const cv::Mat source = cv::imread(samplePath().toStdString(), cv::IMREAD_COLOR);
    QCOMPARE(view->image().cols, source.cols);

    // The pixel at the image centre, as drawn at fit zoom, is the sample's pixel there.
    const QImage frame = view->grabFramebuffer();
    const qreal dpr = view->devicePixelRatioF();
    const QPointF centre = view->imageToWidget(QPointF(source.cols / 2.0, source.rows / 2.0));
    const QRgb drawn = frame.pixel(int(centre.x() * dpr), int(centre.y() * dpr));
    const QPointF sampledAt = view->widgetToImage(
        QPointF((int(centre.x() * dpr) + 0.5) / dpr, (int(centre.y() * dpr) + 0.5) / dpr));
    cv::Mat patch;
    cv::getRectSubPix(source, cv::Size(1, 1),
                      cv::Point2f(float(sampledAt.x() - 0.5), float(sampledAt.y() - 0.5)), patch);
    const cv::Vec3b expected = patch.at<cv::Vec3b>(0, 0);
    const int tolerance = 12;
    QVERIFY2(std::abs(qBlue(drawn) - expected[0]) <= tolerance &&
                 std::abs(qGreen(drawn) - expected[1]) <= tolerance &&
                 std::abs(qRed(drawn) - expected[2]) <= tolerance,
             qPrintable(QStringLiteral("centre drawn RGB %1 %2 %3, sample RGB %4 %5 %6")
                            .arg(qRed(drawn))
                            .arg(qGreen(drawn))
                            .arg(qBlue(drawn))
                            .arg(expected[2])
                            .arg(expected[1])
                            .arg(expected[0])));
    // And the whole picture, not just one pixel (catches flips and swapped channels).
    const double meanError = drawnVersusSource(*view, source, 12);
    QVERIFY2(meanError < 6.0, qPrintable(QStringLiteral("mean abs error %1").arg(meanError)));

    // Status bar: the image size and the device.
    QVERIFY(
        window.findChild<QLabel*>(QStringLiteral("sizeLabel"))->text().contains(QStringLiteral("512 x 512")));
    QVERIFY(
        window.findChild<QLabel*>(QStringLiteral("deviceLabel"))->text().startsWith(QStringLiteral("CPU")));
  }

  void menusHaveTheirActionsAndShortcuts() {
    MainWindow window;
    QMenu* file = menuTitled(window, QStringLiteral("&File"));
    QMenu* view = menuTitled(window, QStringLiteral("&View"));
    QMenu* help = menuTitled(window, QStringLiteral("&Help"));
    QVERIFY(file && view && help);
    const QStringList fileActions = actionNames(file);
    for (const char* name : {"actionOpenImage", "actionOpenFolder", "recentMenu", "actionQuit"}) {
      QVERIFY2(fileActions.contains(QLatin1String(name)), name);
    }
    const QStringList viewActions = actionNames(view);
    for (const char* name : {"actionTogglemediaDock", "actionTogglemodelsDock", "actionTogglelogDock",
                             "actionFit", "actionActualSize", "themeMenu", "compareMenu"}) {
      QVERIFY2(viewActions.contains(QLatin1String(name)), name);
    }
    const QStringList helpActions = actionNames(help);
    QVERIFY(helpActions.contains(QStringLiteral("actionAbout")));
    QVERIFY(helpActions.contains(QStringLiteral("actionOpenLogFolder")));

    // Every command has a keyboard shortcut, and no two share one.
    QList<QKeySequence> seen;
    QList<QMenu*> menus{file, view, help, window.findChild<QMenu*>(QStringLiteral("themeMenu")),
                        window.findChild<QMenu*>(QStringLiteral("compareMenu"))};
    for (QMenu* menu : menus) {
      for (QAction* action : menu->actions()) {
        if (action->isSeparator() || action->menu()) continue;
        QVERIFY2(!action->shortcut().isEmpty(), qPrintable(action->text()));
        QVERIFY2(!seen.contains(action->shortcut()), qPrintable(action->shortcut().toString()));
        seen << action->shortcut();
      }
    }
    // None the desktops take for themselves; Help > Keyboard Shortcuts lists every one.
    for (const char* taken : {"Ctrl+Alt+L", "Ctrl+Alt+D", "Ctrl+Alt+T", "Ctrl+Alt+Del"})
      QVERIFY2(!seen.contains(QKeySequence(QString::fromLatin1(taken))), taken);
    window.findChild<QAction*>(QStringLiteral("actionKeyboardShortcuts"))->trigger();
    auto* table = window.findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
    QVERIFY(table && table->isVisible());
    QStringList listed;
    for (int r = 0; r < table->rowCount(); ++r) listed << table->item(r, 1)->text();
    for (const QKeySequence& keys : seen)
      QVERIFY2(listed.contains(keys.toString(QKeySequence::NativeText)), qPrintable(keys.toString()));
    table->window()->close();
    QVERIFY(!window.windowIcon().isNull() && !window.windowIcon().availableSizes().isEmpty());

    // The dock toggles hide and show their docks.
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto* logDock = window.findChild<QDockWidget*>(QStringLiteral("logDock"));
    QVERIFY(logDock->isVisible());
    window.findChild<QAction*>(QStringLiteral("actionTogglelogDock"))->trigger();
    QVERIFY(!logDock->isVisible());
  }

  void reportsACorruptFileAndKeepsWorking() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window, {samplePath()}));

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString broken = dir.filePath(QStringLiteral("broken_upload.png"));
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    QByteArray garbage;
    for (int i = 0; i < 4096; ++i) garbage.append(char((i * 131 + 17) % 251));
    file.write(garbage);
    file.close();

    QSignalSpy failed(&window, &MainWindow::imageFailed);
    window.openPaths({broken});
    QVERIFY(failed.wait(kLoadTimeoutMs));
    QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("broken_upload.png")));
    // The log panel names the file, the status bar says so, and the last good image stays.
    QTRY_VERIFY_WITH_TIMEOUT(window.logPanel()->toPlainText().contains(QStringLiteral("broken_upload.png")),
                             5000);
    QVERIFY(window.logPanel()->toPlainText().contains(QStringLiteral("error")));
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("broken_upload.png")));
    QCOMPARE(window.windowTitle(), QStringLiteral("Sapiens2 Studio - astronaut.png"));
    QVERIFY(window.imageView()->hasImage());
    // What the user asked for failed: a dialog names the file and the cause.
    auto* dialog = window.findChild<QMessageBox*>(QStringLiteral("failureDialog"));
    QVERIFY(dialog && dialog->isVisible());
    QVERIFY2(
        dialog->text().contains(QStringLiteral("Cannot open the picture")) && dialog->text().contains(broken),
        qPrintable(dialog->text()));
    QVERIFY2(!dialog->informativeText().isEmpty(), "the cause");

    // A missing file is reported the same way, in the dialog still open rather than a second one.
    window.openPaths({dir.filePath(QStringLiteral("gone.jpg"))});
    QVERIFY(failed.wait(kLoadTimeoutMs));
    QVERIFY(failed.at(1).at(1).toString().contains(QStringLiteral("gone.jpg")));
    QCOMPARE(window.findChildren<QMessageBox*>(QStringLiteral("failureDialog")).size(), 1);
    QVERIFY2(dialog->informativeText().contains(QStringLiteral("gone.jpg")),
             qPrintable(dialog->informativeText()));
    dialog->accept();

    // Still working: the sample opens again.
    QVERIFY(openAndWait(window, {samplePath()}));
    QCOMPARE(window.windowTitle(), QStringLiteral("Sapiens2 Studio - astronaut.png"));
    window.close();
  }

  void opensAFolderIntoTheMediaDock() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const cv::Vec3b colours[] = {{0, 0, 255}, {0, 255, 0}, {255, 0, 0}};
    const char* names[] = {"a_red.png", "B_green.jpg", "c_blue.bmp"};
    for (int i = 0; i < 3; ++i) {
      const cv::Mat image(60, 80, CV_8UC3, cv::Scalar(colours[i][0], colours[i][1], colours[i][2]));
      QVERIFY(cv::imwrite(dir.filePath(QLatin1String(names[i])).toStdString(), image));
    }
    QFile notes(dir.filePath(QStringLiteral("notes.txt")));
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("not an image");
    notes.close();

    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window, {dir.path()}));
    QCOMPARE(window.mediaBrowser()->count(), 3);
    QVERIFY(window.currentFile().endsWith(QStringLiteral("a_red.png")));

    auto centreColour = [&window] {
      auto* view = window.imageView();
      const QPointF centre = view->imageToWidget(QPointF(40, 30));
      const qreal dpr = view->devicePixelRatioF();
      return QColor(view->grabFramebuffer().pixel(int(centre.x() * dpr), int(centre.y() * dpr)));
    };
    QCOMPARE(centreColour().red(), 255);
    QCOMPARE(centreColour().green(), 0);

    // Next Image (Page Down) goes to the second file; so does a click in the dock on the third.
    QSignalSpy shown(&window, &MainWindow::imageShown);
    window.findChild<QAction*>(QStringLiteral("actionNextImage"))->trigger();
    QVERIFY(shown.wait(kLoadTimeoutMs));
    QCOMPARE(window.windowTitle(), QStringLiteral("Sapiens2 Studio - B_green.jpg"));
    QVERIFY(centreColour().green() > 240);
    QVERIFY(centreColour().red() < 15);

    window.mediaBrowser()->setCurrentRow(2);
    QVERIFY(shown.wait(kLoadTimeoutMs));
    QCOMPARE(window.windowTitle(), QStringLiteral("Sapiens2 Studio - c_blue.bmp"));
    QCOMPARE(centreColour().blue(), 255);

    // The folder is remembered in Recent Files, and dropped from it once it is gone.
    const sapiens::studio::RecentFiles recent;
    QVERIFY(recent.entries().contains(QFileInfo(dir.path()).absoluteFilePath()));
    QVERIFY(recent.entries().contains(dir.filePath(QStringLiteral("c_blue.bmp"))));
    window.close();
    QVERIFY(dir.remove());
    QVERIFY(!recent.entries().contains(QFileInfo(dir.path()).absoluteFilePath()));
    QVERIFY(recent.entries().isEmpty());
  }

  void opensDroppedFiles() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(samplePath())});
    QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    enter.ignore();
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QSignalSpy shown(&window, &MainWindow::imageShown);
    QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QVERIFY(shown.wait(kLoadTimeoutMs));
    QCOMPARE(window.windowTitle(), QStringLiteral("Sapiens2 Studio - astronaut.png"));
  }

  void listsCheckpointsPerTaskFolder() {
    QTemporaryDir root;
    QVERIFY(root.isValid());
    QVERIFY(QDir(root.path()).mkpath(QStringLiteral("pose")));
    QVERIFY(QDir(root.path()).mkpath(QStringLiteral("seg/older")));
    QVERIFY(QDir(root.path()).mkpath(QStringLiteral("normal")));
    for (const char* name : {"pose/sapiens2_0.4b_pose.safetensors", "seg/sapiens2_1b_seg.safetensors",
                             "seg/older/sapiens2_0.4b_seg.safetensors", "seg/notes.txt"}) {
      QFile file(root.filePath(QLatin1String(name)));
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(QByteArray(2048, 0));
    }
    qputenv("SAPIENS_CHECKPOINT_ROOT", root.path().toUtf8());
    MainWindow window;
    qunsetenv("SAPIENS_CHECKPOINT_ROOT");
    auto* models = window.modelBrowser();
    QCOMPARE(models->root(), root.path());
    QCOMPARE(models->checkpointCount(), 3);
    QTreeWidgetItem* top = models->topLevelItem(0);
    QCOMPARE(top->text(0), root.path());
    QStringList tasks;
    for (int i = 0; i < top->childCount(); ++i) tasks << top->child(i)->text(0);
    QCOMPARE(tasks, QStringList({"normal", "pose", "seg"}));
    QCOMPARE(top->child(0)->text(1), QStringLiteral("none"));
    QTreeWidgetItem* seg = top->child(2);
    QCOMPARE(seg->childCount(), 2);
    QCOMPARE(seg->child(0)->text(0), QStringLiteral("older/sapiens2_0.4b_seg.safetensors"));
    QCOMPARE(seg->child(1)->text(0), QStringLiteral("sapiens2_1b_seg.safetensors"));

    // A root that does not exist says so instead of showing an empty list.
    models->setRoot(root.filePath(QStringLiteral("absent")));
    QCOMPARE(models->checkpointCount(), 0);
    QVERIFY(models->topLevelItem(0)->child(0)->text(0).contains(QStringLiteral("SAPIENS_CHECKPOINT_ROOT")));
  }

  void statusBarReadsOutThePixelUnderTheCursor() {
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QVERIFY(openAndWait(window, {samplePath()}));
    auto* view = window.imageView();
    const QPointF at = view->imageToWidget(QPointF(100.5, 200.5));
    QMouseEvent move(QEvent::MouseMove, at, view->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(view, &move);
    const cv::Vec3b bgr = view->image().at<cv::Vec3b>(200, 100);
    QCOMPARE(window.findChild<QLabel*>(QStringLiteral("hoverLabel"))->text(),
             QStringLiteral("x 100  y 200   B %1  G %2  R %3").arg(bgr[0]).arg(bgr[1]).arg(bgr[2]));
    QVERIFY(window.findChild<QLabel*>(QStringLiteral("zoomLabel"))->text().endsWith(QLatin1Char('%')));
  }

  void themeChoiceAppliesAndPersists() {
    {
      MainWindow window;
      window.findChild<QAction*>(QStringLiteral("actionTheme_dark"))->trigger();
      QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);
      window.findChild<QAction*>(QStringLiteral("actionTheme_light"))->trigger();
      QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 180);
      window.findChild<QAction*>(QStringLiteral("actionTheme_dark"))->trigger();
    }
    QApplication::setPalette(QPalette());
    MainWindow again;
    QVERIFY(again.findChild<QAction*>(QStringLiteral("actionTheme_dark"))->isChecked());
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 80);
    again.findChild<QAction*>(QStringLiteral("actionTheme_system"))->trigger();
    QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 180);
  }

  void comparisonModeIsChosenInTheViewMenuAndPersists() {
    using CompareMode = sapiens::widgets::ImageView::CompareMode;
    {
      MainWindow window;
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      QVERIFY(openAndWait(window, {samplePath()}));
      auto* blend = window.findChild<QAction*>(QStringLiteral("actionCompare_blend"));
      auto* sideBySide = window.findChild<QAction*>(QStringLiteral("actionCompare_sideBySide"));
      auto* split = window.findChild<QAction*>(QStringLiteral("actionCompare_split"));
      QVERIFY(blend && sideBySide && split);
      QVERIFY(blend->isChecked());
      QCOMPARE(window.imageView()->compareMode(), CompareMode::Blend);
      QCOMPARE(split->shortcut(), QKeySequence(QStringLiteral("Ctrl+3")));

      sideBySide->trigger();
      QCOMPARE(window.imageView()->compareMode(), CompareMode::SideBySide);
      QVERIFY(sideBySide->isChecked() && !blend->isChecked());
      // The same image point is drawn in both panes.
      const QPointF left =
          window.imageView()->imageToWidget({256, 256}, sapiens::widgets::ImageView::Pane::Image);
      const QPointF right = window.imageView()->imageToWidget({256, 256});
      QVERIFY(right.x() > left.x() + 100);

      split->trigger();
      QCOMPARE(window.imageView()->compareMode(), CompareMode::Split);
      // The divider, dragged to a third of the view's width.
      auto* view = window.imageView();
      const double from = view->splitPosition() * view->width();
      for (const auto& [type, x, button, buttons] :
           {std::tuple{QEvent::MouseButtonPress, from, Qt::LeftButton, Qt::MouseButtons(Qt::LeftButton)},
            std::tuple{QEvent::MouseMove, view->width() / 3.0, Qt::NoButton,
                       Qt::MouseButtons(Qt::LeftButton)},
            std::tuple{QEvent::MouseButtonRelease, view->width() / 3.0, Qt::LeftButton,
                       Qt::MouseButtons(Qt::NoButton)}}) {
        const QPointF at(x, view->height() / 2.0);
        QMouseEvent event(type, at, view->mapToGlobal(at), button, buttons, Qt::NoModifier);
        QApplication::sendEvent(view, &event);
      }
      QVERIFY(std::abs(view->splitPosition() - 1.0 / 3.0) < 0.01);
    }
    MainWindow again;
    QCOMPARE(again.imageView()->compareMode(), CompareMode::Split);
    QVERIFY(again.findChild<QAction*>(QStringLiteral("actionCompare_split"))->isChecked());
    QVERIFY(std::abs(again.imageView()->splitPosition() - 1.0 / 3.0) < 0.01);
  }

  void offersTheDevicesAndPrecisionsThisMachineRuns() {
    MainWindow window;
    auto* devices = window.findChild<QComboBox*>(QStringLiteral("deviceCombo"));
    auto* dtypes = window.findChild<QComboBox*>(QStringLiteral("dtypeCombo"));
    QVERIFY(devices && dtypes);
    auto items = [](QComboBox* combo) {
      QStringList texts;
      for (int i = 0; i < combo->count(); ++i) texts << combo->itemText(i);
      return texts;
    };
    QStringList expected{QStringLiteral("cpu")};
    const int gpus = at::hasCUDA() ? int(at::getNumGPUs()) : 0;
    for (int i = 0; i < gpus; ++i) expected << QStringLiteral("cuda:%1").arg(i);
    QCOMPARE(items(devices), expected);
    // CUDA first when there is one; on the CPU auto (the core's choice), fp32 and bf16.
    QCOMPARE(devices->currentText(), expected.value(1, QStringLiteral("cpu")));
    devices->setCurrentText(QStringLiteral("cpu"));
    QCOMPARE(items(dtypes),
             (QStringList{QStringLiteral("auto"), QStringLiteral("fp32"), QStringLiteral("bf16")}));
    QVERIFY(dtypes->isEnabled());
    QCOMPARE(window.inference()->device(), QStringLiteral("cpu"));
    QCOMPARE(window.inference()->dtype(), QStringLiteral("auto"));
    auto* deviceLabel = window.findChild<QLabel*>(QStringLiteral("deviceLabel"));
    QVERIFY2(deviceLabel->text().startsWith(QStringLiteral("CPU")) &&
                 deviceLabel->text().endsWith(QStringLiteral("auto")),
             qPrintable(deviceLabel->text()));
    // bf16 without native bf16 is offered, and its tooltip says it is slow.
    const QString bf16Tip = dtypes->itemData(2, Qt::ToolTipRole).toString();
    QVERIFY2(sapiens::cpuBf16Support().native() || bf16Tip.contains(QStringLiteral("slowly")),
             qPrintable(bf16Tip));
    QVERIFY2(dtypes->itemData(0, Qt::ToolTipRole).toString().contains(QStringLiteral("native bf16")),
             qPrintable(dtypes->itemData(0, Qt::ToolTipRole).toString()));
    dtypes->setCurrentText(QStringLiteral("fp32"));
    QCOMPARE(window.inference()->dtype(), QStringLiteral("fp32"));
    QVERIFY2(deviceLabel->text().endsWith(QStringLiteral("fp32")), qPrintable(deviceLabel->text()));
    dtypes->setCurrentText(QStringLiteral("auto"));
    QCOMPARE(window.inference()->dtype(), QStringLiteral("auto"));
    if (gpus > 0) {
      devices->setCurrentText(QStringLiteral("cuda:0"));
      QCOMPARE(items(dtypes),
               (QStringList{QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("fp32")}));
      QCOMPARE(window.inference()->dtype(), QStringLiteral("bf16"));
      QVERIFY2(deviceLabel->text() == QStringLiteral("CUDA:0, bf16"), qPrintable(deviceLabel->text()));
      devices->setCurrentText(QStringLiteral("cpu"));
    }

    // What this machine does not offer is refused with a message, and nothing changes.
    const QString missing = QStringLiteral("cuda:%1").arg(gpus);
    window.setCompute(missing, QStringLiteral("bf16"));
    QVERIFY2(window.statusBar()->currentMessage().contains(missing),
             qPrintable(window.statusBar()->currentMessage()));
    window.setCompute(QStringLiteral("cpu"), QStringLiteral("fp16"));
    QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("fp16")));
    QCOMPARE(window.inference()->device(), QStringLiteral("cpu"));
    QCOMPARE(window.inference()->dtype(), QStringLiteral("auto"));
    QCOMPARE(devices->currentText(), QStringLiteral("cpu"));
    QCOMPARE(dtypes->currentText(), QStringLiteral("auto"));

    // The choice persists; one remembered from another machine falls back to what this one has.
    if (gpus > 0)
      QCOMPARE(QSettings().value(QStringLiteral("compute/device")).toString(), QStringLiteral("cpu"));
    QSettings().setValue(QStringLiteral("compute/device"), missing);
    MainWindow again;
    QCOMPARE(again.inference()->device(), QStringLiteral("cpu"));
    QCOMPARE(again.findChild<QComboBox*>(QStringLiteral("deviceCombo"))->currentText(),
             QStringLiteral("cpu"));
  }

  void everyControlHasAnAccessibleName() {
    // What a screen reader says for each control: its own name, its text, or its label's (a buddy).
    MainWindow window;
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.findChild<QAction*>(QStringLiteral("actionTogglefineTuningDock"))->trigger();
    window.showModelManager();
    QStringList unnamed;
    QList<QWidget*> widgets = window.findChildren<QWidget*>();
    for (QWidget* top : QApplication::topLevelWidgets())
      if (top != &window) widgets += top->findChildren<QWidget*>();
    for (QWidget* w : widgets) {
      const bool control = qobject_cast<QAbstractButton*>(w) || qobject_cast<QComboBox*>(w) ||
                           qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QSlider*>(w) ||
                           qobject_cast<QLineEdit*>(w) || qobject_cast<QAbstractItemView*>(w);
      // Qt's own parts of a control (a spin box's editor, a combo box's list, dock and scroll buttons).
      const bool part = w->objectName().startsWith(QStringLiteral("qt_")) ||
                        qobject_cast<QAbstractSpinBox*>(w->parentWidget()) ||
                        qobject_cast<QComboBox*>(w->parentWidget()) ||
                        w->inherits("QComboBoxPrivateContainer") ||
                        (w->parentWidget() && w->parentWidget()->inherits("QComboBoxPrivateContainer")) ||
                        (w->parentWidget() && w->parentWidget()->inherits("QTabBar")) ||
                        qobject_cast<QAbstractItemView*>(w->parentWidget()) ||  // headers, corner button
                        (w->parentWidget() && w->parentWidget()->inherits("QDockWidget") &&
                         qobject_cast<QAbstractButton*>(w));
      if (!control || part) continue;
      QAccessibleInterface* accessible = QAccessible::queryAccessibleInterface(w);
      if (!accessible || accessible->text(QAccessible::Name).trimmed().isEmpty())
        unnamed << QStringLiteral("%1 '%2' in %3")
                       .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName(),
                            w->parentWidget() ? w->parentWidget()->objectName() : QString());
    }
    QVERIFY2(unnamed.isEmpty(), qPrintable(unnamed.join(QStringLiteral("\n"))));
  }

  void layoutPersistsBetweenRuns() {
    {
      MainWindow window;
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      window.findChild<QDockWidget*>(QStringLiteral("logDock"))->hide();
      window.close();
    }
    MainWindow again;
    again.show();
    QVERIFY(QTest::qWaitForWindowExposed(&again));
    QVERIFY(!again.findChild<QDockWidget*>(QStringLiteral("logDock"))->isVisible());
    QVERIFY(again.findChild<QDockWidget*>(QStringLiteral("mediaDock"))->isVisible());
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
