#include "main_window.h"

#include "app_icon.h"
#include "checkpoint_jobs.h"
#include "cloud_options_bar.h"
#include "compute_toolbar.h"
#include "export_controller.h"
#include "failure_dialog.h"
#include "file_dialogs.h"
#include "finetune_panel.h"
#include "first_run_banner.h"
#include "help_menu.h"
#include "inference_session.h"
#include "media_browser.h"
#include "model_browser.h"
#include "model_controller.h"
#include "playback_controller.h"
#include "recent_files_menu.h"
#include "result_layers.h"
#include "status_readouts.h"
#include "tasks_panel.h"
#include "view_choice_menus.h"

#include "image_view.h"
#include "log_panel.h"
#include "point_cloud_view.h"

#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/media/image_io.h"

#include <opencv2/core.hpp>

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace sapiens::studio {
namespace {

// Anything that is neither a folder nor named like an image is opened as a video (FFmpeg says whether it
// is one).
bool isVideoPath(const QString& path) {
  return !QFileInfo(path).isDir() && !hasImageExtension(path.toStdString());
}

// `bar` over `main`, edge to edge, `main` taking the height left.
QWidget* barAbove(QWidget* bar, QWidget* main) {
  auto* pane = new QWidget;
  auto* layout = new QVBoxLayout(pane);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(bar);
  layout->addWidget(main, 1);
  return pane;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("mainWindow"));
  setWindowIcon(studioIcon());
  setAcceptDrops(true);
  resize(1200, 760);

  view_ = new widgets::ImageView(this);
  view_->setObjectName(QStringLiteral("imageView"));
  banner_ = new FirstRunBanner;
  setCentralWidget(barAbove(banner_, view_));

  createInference();
  createDocks();
  createResultLayers();
  createPlayback();
  createExports();
  createModels();
  createActions();
  createFineTuningDock();
  createMotionDock();
  createStatusBar();

  connect(&loader_, &ImageLoader::loaded, this, &MainWindow::onImageLoaded);
  connect(&loader_, &ImageLoader::failed, this, &MainWindow::onImageFailed);
  connect(view_, &widgets::ImageView::imageShown, this, [this] { Q_EMIT imageShown(currentFile_); });
  connect(media_, &MediaBrowser::fileChosen, this, &MainWindow::showFile);
  connect(tasksPanel_, &TasksPanel::runRequested, this, &MainWindow::runTasks);
  connect(tasksPanel_, &TasksPanel::layersChanged, layers_, &ResultLayers::apply);
  connect(view_, &widgets::ImageView::personBoxDrawn, this, &MainWindow::addPersonBox);
  connect(view_, &widgets::ImageView::personBoxDeleteRequested, this, &MainWindow::deletePersonBox);
  connect(view_, &widgets::ImageView::splitPositionMoved, this,
          [](double fraction) { QSettings().setValue(QStringLiteral("view/splitPosition"), fraction); });

  restoreSettings();
  playback_->timelineBar()->setVisible(false);  // a saved layout may have it shown; it appears with a video
  updateTitle();
  updateExportActions();
  modelControl_->updateLabels();
  modelControl_->discoverCheckpoints();
}

MainWindow::~MainWindow() {
  background_.clear();
  background_.waitForDone();
}

void MainWindow::createInference() {
  inference_ = new InferenceSession(this);
  connect(inference_, &InferenceSession::resultReady, this, &MainWindow::onResult);
  connect(inference_, &InferenceSession::started, this, [this](const QString& path) {
    statusBar()->showMessage(tr("Running on %1...").arg(QFileInfo(path).fileName()));
  });
  connect(inference_, &InferenceSession::runFailed, this, [this](const QString& path, const QString& reason) {
    // One message, not one per frame: the rest of this playback goes without tasks.
    playback_->resultsArrived(path, true);
    if (path != currentKey_) return;
    poseEditPending_ = false;
    statusBar()->showMessage(reason, kStatusMessageMs);
    // A run the user asked for; during playback the status bar says it once and playback goes on.
    if (!player_ || !player_->isPlaying()) showFailure(this, tr("The run failed"), path, reason);
    Q_EMIT runFailed(reason);
  });
}

QDockWidget* MainWindow::addDock(const QString& title, const char* name, QWidget* widget,
                                 Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(QLatin1String(name));
  dock->setWidget(widget);
  addDockWidget(area, dock);
  return dock;
}

void MainWindow::createDocks() {
  media_ = new MediaBrowser;
  mediaDock_ = addDock(tr("Media"), "mediaDock", media_, Qt::LeftDockWidgetArea);
  models_ = new ModelBrowser;
  modelsDock_ = addDock(tr("Models"), "modelsDock", models_, Qt::LeftDockWidgetArea);
  tabifyDockWidget(mediaDock_, modelsDock_);
  mediaDock_->raise();
  tasksPanel_ = new TasksPanel;
  tasksDock_ = addDock(tr("Tasks and Layers"), "tasksDock", tasksPanel_, Qt::RightDockWidgetArea);
  cloudView_ = new widgets::PointCloudView;
  cloudView_->setObjectName(QStringLiteral("pointCloudView"));
  cloudView_->setMinimumSize(240, 200);
  cloudOptions_ = new CloudOptionsBar;
  cloudDock_ = addDock(tr("3-D"), "cloudDock", barAbove(cloudOptions_, cloudView_), Qt::RightDockWidgetArea);
  logPanel_ = new widgets::LogPanel;
  logDock_ = addDock(tr("Log"), "logDock", logPanel_, Qt::BottomDockWidgetArea);
  resizeDocks({mediaDock_}, {260}, Qt::Horizontal);
  resizeDocks({logDock_}, {150}, Qt::Vertical);
}

const FrameResult* MainWindow::currentResult() const {
  return layers_->result() ? &*layers_->result() : nullptr;
}

void MainWindow::createResultLayers() {
  layers_ = new ResultLayers(view_, cloudView_, tasksPanel_, &background_, this);
  layers_->setPointColoring(cloudOptions_->coloring());
  cloudView_->setPointSize(float(cloudOptions_->pointSize()));
  cloudView_->setSkeletonsVisible(cloudOptions_->skeletonsShown());
  connect(cloudOptions_, &CloudOptionsBar::skeletonsToggled, cloudView_,
          &widgets::PointCloudView::setSkeletonsVisible);
  connect(cloudOptions_, &CloudOptionsBar::coloringChanged, layers_, &ResultLayers::setPointColoring);
  connect(cloudOptions_, &CloudOptionsBar::pointSizeChanged, cloudView_,
          [this](int pixels) { cloudView_->setPointSize(float(pixels)); });
  connect(layers_, &ResultLayers::denseLayerShown, this, &MainWindow::denseLayerShown);
  connect(layers_, &ResultLayers::pointCloudShown, this, &MainWindow::pointCloudShown);
  connect(layers_, &ResultLayers::problem, this,
          [this](const QString& message) { statusBar()->showMessage(message, kStatusMessageMs); });
}

void MainWindow::createExports() {
  ExportController::Sources sources;
  sources.window = this;
  sources.layers = layers_;
  sources.tasks = tasksPanel_;
  sources.inference = inference_;
  sources.player = player_;
  sources.pool = &background_;
  sources.pictureView = view_;
  sources.cloudView = cloudView_;
  sources.subject = [this] {
    return ExportSubject{currentFile_, currentFrame_, modelControl_->demoTasks(), videoBoxes_};
  };
  exports_ = new ExportController(std::move(sources), this);
  connect(exports_, &ExportController::exportFinished, this, &MainWindow::exportFinished);
  connect(exports_, &ExportController::videoExportFinished, this, &MainWindow::videoExportFinished);
  connect(exports_, &ExportController::message, this,
          [this](const QString& text, int timeoutMs) { statusBar()->showMessage(text, timeoutMs); });
}

void MainWindow::createActions() {
  auto makeAction = [this](QMenu* menu, const QString& name, const QString& text,
                           const QKeySequence& shortcut, auto slot) {
    QAction* action = menu->addAction(text);
    action->setObjectName(name);
    action->setShortcut(shortcut);
    connect(action, &QAction::triggered, this, slot);
    return action;
  };

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->setObjectName(QStringLiteral("fileMenu"));
  makeAction(file, QStringLiteral("actionOpenImage"), tr("&Open Image..."), QKeySequence::Open,
             [this] { chooseImages(); });
  makeAction(file, QStringLiteral("actionOpenFolder"), tr("Open &Folder..."),
             QKeySequence(tr("Ctrl+Shift+O")), [this] { chooseFolder(); });
  makeAction(file, QStringLiteral("actionOpenVideo"), tr("Open &Video..."), QKeySequence(tr("Ctrl+Shift+V")),
             [this] { chooseVideo(); });
  makeAction(file, QStringLiteral("actionOpenCamera"), tr("Open &Camera..."),
             QKeySequence(tr("Ctrl+Shift+C")), [this] { chooseCamera(); });
  recentMenu_ = addRecentFilesMenu(file, recent_, [this](const QString& path) { openPaths({path}); });
  exports_->addMenu(file);
  file->addSeparator();
  makeAction(file, QStringLiteral("actionQuit"), tr("&Quit"), QKeySequence::Quit, [this] { close(); });

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->setObjectName(QStringLiteral("viewMenu"));
  const std::pair<QDockWidget*, const char*> docks[] = {{mediaDock_, "Ctrl+Shift+M"},
                                                        {modelsDock_, "Ctrl+Shift+K"},
                                                        {tasksDock_, "Ctrl+Shift+T"},
                                                        {cloudDock_, "Ctrl+Shift+P"},
                                                        {logDock_, "Ctrl+Shift+L"}};
  for (const auto& [dock, keys] : docks) {
    QAction* toggle = dock->toggleViewAction();
    toggle->setObjectName(QStringLiteral("actionToggle") + dock->objectName());
    toggle->setShortcut(QKeySequence(QString::fromLatin1(keys)));
    view->addAction(toggle);
  }
  view->addSeparator();
  makeAction(view, QStringLiteral("actionFit"), tr("&Fit to Window"), QKeySequence(Qt::Key_F),
             [this] { view_->fitToView(); });
  makeAction(view, QStringLiteral("actionActualSize"), tr("&Actual Size"), QKeySequence(Qt::Key_1),
             [this] { view_->showActualSize(); });
  makeAction(view, QStringLiteral("actionZoomIn"), tr("Zoom &In"), QKeySequence::ZoomIn,
             [this] { view_->zoomIn(); });
  makeAction(view, QStringLiteral("actionZoomOut"), tr("Zoom &Out"), QKeySequence::ZoomOut,
             [this] { view_->zoomOut(); });
  compareMenu_ = new CompareModeMenu(view_, view);
  view->addSeparator();
  makeAction(view, QStringLiteral("actionNextImage"), tr("&Next Image"), QKeySequence(Qt::Key_PageDown),
             [this] { stepImage(1); });
  makeAction(view, QStringLiteral("actionPreviousImage"), tr("&Previous Image"), QKeySequence(Qt::Key_PageUp),
             [this] { stepImage(-1); });
  makeAction(view, QStringLiteral("actionRefreshModels"), tr("&Rescan Models"), QKeySequence::Refresh,
             [this] { models_->refresh(); });
  view->addSeparator();
  themeMenu_ = new ThemeMenu(view);

  playback_->createActions(file, recentMenu_->menuAction());
  createTracking(file);
  modelControl_->createMenu(menuBar());

  addHelpMenu(this);
}

void MainWindow::setCompareMode(widgets::ImageView::CompareMode mode) {
  compareMenu_->set(mode);
}

void MainWindow::createModels() {
  modelControl_ = new ModelController(this, inference_, models_, &background_);
  models_->setRoot(modelControl_->checkpointRoot());
  computeBar_ = modelControl_->computeToolBar();
  addToolBar(Qt::TopToolBarArea, computeBar_);
  connect(modelControl_, &ModelController::runRequested, this, &MainWindow::runTasks);
  connect(modelControl_, &ModelController::demoTasksChanged, this, &MainWindow::updateTitle);
  connect(modelControl_, &ModelController::lookupFinished, this, &MainWindow::updateFirstRunBanner);
  connect(modelControl_, &ModelController::modelReady, this, &MainWindow::updateFirstRunBanner);
  connect(tasksPanel_, &TasksPanel::tasksChanged, this, &MainWindow::updateFirstRunBanner);
  connect(banner_, &FirstRunBanner::downloadRequested, modelControl_, &ModelController::downloadCheckpoints);
  connect(banner_, &FirstRunBanner::chooseFolderRequested, modelControl_,
          &ModelController::chooseCheckpointFolder);
  connect(banner_, &FirstRunBanner::demoWeightsRequested, this,
          [this] { modelControl_->setDemoFallback(true); });
  connect(modelControl_, &ModelController::modelReady, this, &MainWindow::modelReady);
  connect(modelControl_, &ModelController::modelProblem, this, &MainWindow::modelProblem);
  connect(modelControl_, &ModelController::message, this,
          [this](const QString& text, int timeoutMs) { statusBar()->showMessage(text, timeoutMs); });
}

void MainWindow::showModelManager() {
  modelControl_->showModelManager();
}

void MainWindow::useDemoWeights() {
  modelControl_->setDemoFallback(true, false);
}

void MainWindow::updateFirstRunBanner() {
  if (modelControl_->lookingUp()) return;  // its end calls this again
  std::vector<Task> checked;
  for (Task task : headTasksInRunOrder())
    if (contains(tasksPanel_->selectedTasks(), task)) checked.push_back(task);
  banner_->showMissing(modelControl_->tasksWithoutModel(checked), modelControl_->checkpointRoot());
}

void MainWindow::loadCheckpoint(Task task, const QString& path) {
  modelControl_->loadCheckpoint(task, path);
}

void MainWindow::setCompute(const QString& device, const QString& dtype) {
  modelControl_->setCompute(device, dtype);
}

void MainWindow::setInputScale(double scale) {
  modelControl_->setInputScale(scale);
}

void MainWindow::createStatusBar() {
  readouts_ = new StatusReadouts(statusBar(), view_, layers_, modelControl_->modelLabel(),
                                 playback_->rateLabel(), modelControl_->deviceLabel());
}

void MainWindow::restoreSettings() {
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  themeMenu_->restore();
  view_->setSplitPosition(settings.value(QStringLiteral("view/splitPosition"), 0.5).toDouble());
  compareMenu_->restore();
  modelControl_->restoreCompute();
}

void MainWindow::saveSettings() const {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  const QStringList work = workUnderWay();
  if (!work.isEmpty() && !quitConfirmed_) {
    event->ignore();
    askBeforeQuitting(work);
    return;
  }
  saveSettings();
  stopWorkForQuitting();
  QMainWindow::closeEvent(event);
}

QStringList MainWindow::workUnderWay() const {
  QStringList work;
  if (fineTunePanel_) work << fineTunePanel_->workUnderWay();  // a fine-tuning run, a label import
  if (exports_->videoExportRunning()) work << tr("an annotated video export");
  const int downloads = static_cast<int>(modelControl_->checkpointJobs()->downloadQueue().size());
  if (downloads == 1) work << tr("a checkpoint download");
  if (downloads > 1) work << tr("%1 checkpoint downloads").arg(downloads);
  return work;
}

void MainWindow::askBeforeQuitting(const QStringList& work) {
  auto* box =
      new QMessageBox(QMessageBox::Question, tr("Quit Sapiens2 Studio"),
                      tr("Quitting stops %1.").arg(work.join(tr(" and "))), QMessageBox::NoButton, this);
  box->setObjectName(QStringLiteral("quitDialog"));
  box->setInformativeText(
      tr("A download keeps what it has and resumes later; a partial video is removed; "
         "labels are saved."));
  QPushButton* quit = box->addButton(tr("Stop and &Quit"), QMessageBox::DestructiveRole);
  quit->setObjectName(QStringLiteral("stopAndQuit"));
  box->addButton(tr("&Keep Working"), QMessageBox::RejectRole)->setObjectName(QStringLiteral("keepWorking"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  connect(quit, &QPushButton::clicked, this, [this] {
    quitConfirmed_ = true;
    QMetaObject::invokeMethod(this, &QWidget::close, Qt::QueuedConnection);
  });
  box->open();
}

void MainWindow::stopWorkForQuitting() {
  // Each through its cancel path; the threads end in the destructors, none waits for a whole step.
  modelControl_->checkpointJobs()->cancelDownloads();  // the .part files stay for a resume
  exports_->abandonVideoExport();
  if (fineTunePanel_) fineTunePanel_->stopForQuitting();
}

void MainWindow::chooseImages() {
  const QStringList files =
      QFileDialog::getOpenFileNames(this, tr("Open Image"), dialogDirectory(), tr(kImageFilter));
  if (files.isEmpty()) return;
  rememberDialogDirectory(files.first());
  openPaths(files);
}

void MainWindow::chooseFolder() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Folder"), dialogDirectory());
  if (folder.isEmpty()) return;
  rememberDialogDirectory(folder);
  openPaths({folder});
}

void MainWindow::openPaths(const QStringList& paths) {
  QStringList files;
  for (const QString& path : paths) {
    const QFileInfo info(path);
    if (info.isDir()) {
      try {
        const auto images = listImages(info.absoluteFilePath().toStdString(), false);
        if (images.empty()) {
          logger().warn("no images (png jpg jpeg bmp tif tiff webp exr) in folder {}", path.toStdString());
          statusBar()->showMessage(tr("No images in %1").arg(path), kStatusMessageMs);
          continue;
        }
        for (const auto& image : images) files << QString::fromStdString(image);
        recent_.add(info.absoluteFilePath());
        logger().info("opened folder {} ({} images)", path.toStdString(), images.size());
      } catch (const std::exception& e) {
        logger().error("cannot open folder: {}", e.what());
        statusBar()->showMessage(QString::fromStdString(e.what()), kStatusMessageMs);
      }
    } else {
      // Missing and unreadable files go to the loader too, which reports why.
      files << info.absoluteFilePath();
    }
  }
  if (files.isEmpty()) return;
  if (!(files.size() == 1 && media_->files().contains(files.first()))) media_->setFiles(files);
  showFile(files.first());
}

void MainWindow::showFile(const QString& path) {
  if (isVideoPath(path)) return openMedia(path);
  closeMedia();
  inference_->supersede();  // a run for the image being left is no longer wanted
  statusBar()->showMessage(tr("Loading %1...").arg(QFileInfo(path).fileName()));
  loader_.load(path);
}

void MainWindow::stepImage(int delta) {
  const QStringList files = media_->files();
  if (files.isEmpty()) return;
  const int index = int(files.indexOf(currentFile_));
  const int next = index < 0 ? 0 : int((index + delta + files.size()) % files.size());
  media_->setCurrentRow(next);  // the browser asks to show it
}

void MainWindow::onImageLoaded(const QString& path, const cv::Mat& image) {
  currentFile_ = path;
  currentKey_ = path;
  currentFrame_ = -1;
  layers_->clear(image);
  userBoxes_.clear();
  poseEditPending_ = false;
  view_->setImage(image);
  updateExportActions();
  media_->markCurrent(path);
  recent_.add(path);
  readouts_->showPictureSize(image.cols, image.rows);
  statusBar()->clearMessage();
  updateTitle();
  logger().info("showing {} ({}x{})", path.toStdString(), image.cols, image.rows);
  if (tasksPanel_->runsOnOpen()) runTasks();
}

void MainWindow::onImageFailed(const QString& path, const QString& reason) {
  logger().error("cannot open image: {}", reason.toStdString());
  statusBar()->showMessage(reason, kStatusMessageMs);
  showFailure(this, tr("Cannot open the picture"), path, reason);
  Q_EMIT imageFailed(path, reason);
}

void MainWindow::updateTitle() {
  const QString base = modelControl_->demoTasks().empty() ? tr("Sapiens2 Studio")
                                                          : tr("Sapiens2 Studio [UNTRAINED demo weights]");
  setWindowTitle(currentFile_.isEmpty() ? base
                                        : base + QStringLiteral(" - ") + QFileInfo(currentFile_).fileName());
}

void MainWindow::runTasks() {
  if (!view_->hasImage() || currentKey_.isEmpty()) {
    statusBar()->showMessage(tr("Open an image first"), kStatusMessageMs);
    return;
  }
  if (modelControl_->lookingUp()) {
    modelControl_->runWhenReady();
    statusBar()->showMessage(tr("Looking for checkpoints; the run starts when they are found"));
    return;
  }
  const TaskSet selected = tasksPanel_->selectedTasks();
  if (selected == 0) {
    statusBar()->showMessage(tr("Check at least one task in the Tasks & Layers dock"), kStatusMessageMs);
    return;
  }
  const TaskSet tasks = currentFrame_ >= 0 ? tasksForFrame(selected, currentFrame_) : selected;
  if (tasks == 0) {
    statusBar()->showMessage(tr("The person box file has nobody in this frame"), kStatusMessageMs);
    return;
  }
  poseEditPending_ = false;
  playback_->dropHeldFrame();  // this request supersedes the held frame's
  inference_->request(currentKey_, view_->image(), tasks, userBoxes_);
}

void MainWindow::onResult(const QString& path, TaskSet tasks, const FrameResult& result, double wallMs,
                          bool fromCache) {
  playback_->resultsArrived(path, false);
  if (path != currentKey_) return;
  if (poseEditPending_ && tasks == taskBit(Task::Pose) && currentResult()) {
    // A re-run in the user's boxes replaces the poses only.
    std::vector<PoseInstance> poses = result.poses;
    if (currentFrame_ >= 0) recordTracks(currentFrame_, poses);
    layers_->setPoses(std::move(poses),
                      result.inferenceMs.count(Task::Pose) ? result.inferenceMs.at(Task::Pose) : 0.0);
  } else {
    FrameResult shown = result;
    if (currentFrame_ >= 0) recordTracks(currentFrame_, shown.poses);
    layers_->setResult(std::move(shown));
  }
  poseEditPending_ = false;
  const QString perTask = readouts_->showRunTime(tasks, result, wallMs, fromCache);
  const QString problems = resultProblems(result);
  if (problems.isEmpty())
    statusBar()->clearMessage();
  else
    statusBar()->showMessage(problems, kStatusMessageMs);
  modelControl_->updateLabels();
  updateExportActions();
  logger().info("results for {}: {}{}", QFileInfo(path).fileName().toStdString(), perTask.toStdString(),
                fromCache ? " (cached)" : "");
  Q_EMIT resultShown(path);
}

void MainWindow::updateExportActions() {
  exports_->updateActions();
}

void MainWindow::exportResult(ExportKind kind, const QString& path) {
  exports_->exportResult(kind, path);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  for (const QUrl& url : urls) {
    if (url.isLocalFile()) return event->acceptProposedAction();
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) paths << url.toLocalFile();
  }
  if (paths.isEmpty()) return;
  event->acceptProposedAction();
  openPaths(paths);
}

}  // namespace sapiens::studio
