#include "model_controller.h"

#include "background_work.h"
#include "checkpoint_jobs.h"
#include "compute_devices.h"
#include "compute_toolbar.h"
#include "file_dialogs.h"
#include "inference_session.h"
#include "model_browser.h"
#include "model_manager_dialog.h"
#include "task_set.h"

#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/common/threads.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QStringList>
#include <QWidget>

namespace sapiens::studio {
namespace {
constexpr int kMessageMs = 10000;

QString cpuThreads() {
  const int threadCount = threads::current();
  return threadCount == 1 ? QObject::tr("CPU, 1 thread") : QObject::tr("CPU, %1 threads").arg(threadCount);
}

}  // namespace

ModelController::ModelController(QWidget* window, InferenceSession* inference, ModelBrowser* browser,
                                 QThreadPool* pool)
    : QObject(window),
      window_(window),
      inference_(inference),
      browser_(browser),
      pool_(pool),
      jobs_(new CheckpointJobs(this)),
      computeBar_(new ComputeToolBar(window)),
      modelLabel_(new QLabel(tr("no model"))),
      deviceLabel_(new QLabel(cpuThreads())) {
  modelLabel_->setObjectName(QStringLiteral("modelLabel"));
  deviceLabel_->setObjectName(QStringLiteral("deviceLabel"));
  connect(computeBar_, &ComputeToolBar::computeChosen, this, &ModelController::setCompute);
  connect(computeBar_, &ComputeToolBar::inputScaleChosen, this, &ModelController::setInputScale);
  connect(inference_, &InferenceSession::modelLoaded, this, [this](Task task, const QString& path) {
    Q_EMIT message(tr("Loaded the %1 model %2").arg(taskLabel(task), QFileInfo(path).fileName()), kMessageMs);
    updateLabels();
    Q_EMIT modelReady(task, path);
  });
  connect(inference_, &InferenceSession::modelFailed, this,
          [this](Task task, const QString&, const QString& reason) {
            // The worker logged it; the status bar tells the user without stopping them.
            Q_EMIT message(tr("Cannot load the %1 model: %2").arg(taskLabel(task), reason), kMessageMs);
            updateLabels();
            Q_EMIT modelProblem(task, reason);
          });
}

void ModelController::restoreCompute() {
  QSettings settings;
  // A device remembered from a machine with CUDA falls back to this one's first (the CPU).
  const QStringList devices = availableDevices();
  // The first CUDA device when there is one.
  QString device =
      settings.value(QStringLiteral("compute/device"), devices.value(1, devices.first())).toString();
  if (!devices.contains(device)) {
    logger().warn("the remembered device {} is not available here, using {}", qUtf8Printable(device),
                  qUtf8Printable(devices.first()));
    device = devices.first();
  }
  QString dtype = settings.value(QStringLiteral("compute/dtype")).toString();
  if (!dtypesFor(device).contains(dtype)) dtype = defaultDtype(device);
  computeBar_->setCompute(device, dtype);
  inference_->setCompute(device, dtype);
  const double scale = settings.value(QStringLiteral("compute/inputScale"), 1.0).toDouble();
  computeBar_->setInputScale(scale);
  inference_->setInputScale(computeBar_->inputScale());
}

void ModelController::createMenu(QMenuBar* menuBar) {
  QMenu* models = menuBar->addMenu(tr("&Models"));
  models->setObjectName(QStringLiteral("modelsMenu"));
  QAction* run = models->addAction(tr("&Run Tasks"));
  run->setObjectName(QStringLiteral("actionRun"));
  run->setShortcut(QKeySequence(tr("Ctrl+R")));
  connect(run, &QAction::triggered, this, &ModelController::runRequested);
  models->addSeparator();
  for (Task task : headTasksInRunOrder()) {
    QAction* load = models->addAction(tr("Load %1 Checkpoint...").arg(taskLabel(task)));
    load->setObjectName(QStringLiteral("actionLoadCheckpoint_") + taskLabel(task));
    connect(load, &QAction::triggered, this, [this, task] { chooseCheckpoint(task); });
  }
  models->addSeparator();
  QAction* manage = models->addAction(tr("&Manage Models..."));
  manage->setObjectName(QStringLiteral("actionManageModels"));
  connect(manage, &QAction::triggered, this, &ModelController::showModelManager);
  demoFallbackAction_ = models->addAction(tr("Use &Demo Weights When No Checkpoint Is Found"));
  demoFallbackAction_->setObjectName(QStringLiteral("actionDemoFallback"));
  demoFallbackAction_->setCheckable(true);
  // Off until the user asks for them: with no checkpoint the window says so (FirstRunBanner).
  demoFallbackAction_->setChecked(QSettings().value(QStringLiteral("models/demoFallback"), false).toBool());
  connect(demoFallbackAction_, &QAction::triggered, this, [this](bool on) { setDemoFallback(on); });
  QAction* discover = models->addAction(tr("&Find Checkpoints"));
  discover->setObjectName(QStringLiteral("actionDiscoverCheckpoints"));
  connect(discover, &QAction::triggered, this, [this] {
    browser_->refresh();
    discoverCheckpoints(true);
  });
}

QString ModelController::checkpointRoot() const {
  const QString chosen = QSettings().value(QStringLiteral("models/checkpointRoot")).toString();
  return QString::fromStdString(paths::checkpointRoot(chosen.toStdString()));
}

void ModelController::setCheckpointRoot(const QString& root) {
  QSettings().setValue(QStringLiteral("models/checkpointRoot"), root);
  if (paths::checkpointRootFromEnvironment())
    logger().warn("$SAPIENS_CHECKPOINT_ROOT is set: it decides the checkpoint folder, not {}",
                  qUtf8Printable(root));
  else
    logger().info("checkpoint folder: {}", qUtf8Printable(root));
  browser_->setRoot(checkpointRoot());
  if (manager_) manager_->setRoot(checkpointRoot());
  discoverCheckpoints(true);
}

void ModelController::showModelManager() {
  if (!manager_) {
    manager_ = new ModelManagerDialog(jobs_, zoo::catalogue(), checkpointRoot(), window_);
    manager_->setAttribute(Qt::WA_DeleteOnClose);
    connect(manager_, &ModelManagerDialog::rootChosen, this, &ModelController::setCheckpointRoot);
    connect(manager_, &ModelManagerDialog::checkpointsChanged, this, [this] {
      browser_->refresh();
      discoverCheckpoints(true);
    });
  }
  manager_->show();
  manager_->raise();
  manager_->activateWindow();
}

void ModelController::downloadCheckpoints(const QStringList& ids) {
  showModelManager();
  manager_->download(ids);
}

void ModelController::chooseCheckpointFolder() {
  auto* dialog = new QFileDialog(window_, tr("Folder with Checkpoints"), checkpointRoot());
  dialog->setObjectName(QStringLiteral("checkpointFolderDialog"));
  dialog->setFileMode(QFileDialog::Directory);
  dialog->setOption(QFileDialog::ShowDirsOnly);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QFileDialog::fileSelected, this, &ModelController::setCheckpointRoot);
  dialog->open();
}

std::vector<Task> ModelController::tasksWithoutModel(const std::vector<Task>& tasks) const {
  std::vector<Task> missing;
  for (Task task : tasks) {
    const auto known = inference_->models().find(task);
    if (known == inference_->models().end() || known->second.path.isEmpty()) missing.push_back(task);
  }
  return missing;
}

void ModelController::discoverCheckpoints(bool replaceFound) {
  CheckpointRequest request;
  request.root = checkpointRoot().toStdString();
  for (Task task : headTasksInRunOrder()) {
    const auto known = inference_->models().find(task);
    const bool loaded = known != inference_->models().end() && known->second.loaded;
    // The user's choice stays; so does a loaded checkpoint, unless it is demo weights a found one replaces
    // or the folder it came from changed.
    if (!userChosenTasks_.count(task) && (!loaded || demoTasks_.count(task) || replaceFound))
      request.tasks.push_back(task);
  }
  if (request.tasks.empty()) return;
  request.demoFallback = demoFallbackAction_->isChecked();
  // Looked up (demo weights are generated the first time, about a second) off the GUI thread. A run asked
  // for in the meantime (run on open) waits for it rather than failing for want of a model.
  ++lookups_;
  runInBackground(
      *pool_, this, [request] { return resolveTaskCheckpoints(request); },
      [this, replaceFound, demoAsked = request.demoFallback](const std::vector<TaskCheckpoint>& checkpoints,
                                                             const QString& error) {
        --lookups_;
        if (!error.isEmpty()) logger().error("cannot look for checkpoints: {}", qUtf8Printable(error));
        useCheckpoints(checkpoints, replaceFound, demoAsked);
        Q_EMIT lookupFinished();
        if (lookups_ == 0 && runAfterLookup_) {
          runAfterLookup_ = false;
          Q_EMIT runRequested();
        }
      });
}

void ModelController::useCheckpoints(const std::vector<TaskCheckpoint>& checkpoints, bool replaceFound,
                                     bool demoAsked) {
  QStringList demoTasks;
  for (const TaskCheckpoint& checkpoint : checkpoints) {
    const Task task = checkpoint.task;
    const auto known = inference_->models().find(task);
    const QString current = known == inference_->models().end() ? QString() : known->second.path;
    const QString path = QString::fromStdString(checkpoint.path);
    if (userChosenTasks_.count(task)) continue;  // chosen in the meantime
    if (checkpoint.source == CheckpointSource::Found) {
      demoTasks_.erase(task);
      if (path != current) inference_->setModelPath(task, path);
    } else if (checkpoint.source == CheckpointSource::DemoWeights) {
      // Off, or found meanwhile (unless what was found before is what this lookup replaces).
      if (!demoFallbackAction_->isChecked() || (!current.isEmpty() && !replaceFound)) continue;
      if (path != current) inference_->setModelPath(task, path);
      demoTasks_.insert(task);
      demoTasks << taskLabel(task);
    } else {
      // A lookup that did not ask for demo weights (one started before they were turned on, as at a
      // --demo-weights start) leaves those in use alone; one that asked and got none failed.
      if (!demoAsked && demoTasks_.count(task)) continue;
      if (demoAsked) logger().error("no demo weights: {}", checkpoint.error);
      // A checkpoint of a folder no longer in use goes with it.
      if (replaceFound && !current.isEmpty()) inference_->setModelPath(task, QString());
      demoTasks_.erase(task);
    }
  }
  if (!demoTasks.isEmpty()) {
    Q_EMIT message(tr("No checkpoint for %1: running UNTRAINED demo weights (Models > Load Checkpoint "
                      "for real results)")
                       .arg(demoTasks.join(QStringLiteral(", "))),
                   kMessageMs);
  }
  updateLabels();
  Q_EMIT demoTasksChanged();
}

void ModelController::setDemoFallback(bool on, bool remember) {
  if (remember) QSettings().setValue(QStringLiteral("models/demoFallback"), on);
  demoFallbackAction_->setChecked(on);
  if (on) return discoverCheckpoints();
  for (Task task : std::set<Task>(demoTasks_)) inference_->setModelPath(task, QString());
  demoTasks_.clear();
  updateLabels();
  Q_EMIT demoTasksChanged();
}

void ModelController::chooseCheckpoint(Task task) {
  const QString start = checkpointRoot();
  const QString file =
      QFileDialog::getOpenFileName(window_, tr("Load %1 Checkpoint").arg(taskLabel(task)),
                                   QFileInfo(start).isDir() ? start : dialogDirectory(),
                                   tr("Sapiens2 checkpoints (*.safetensors);;All files (*)"));
  if (!file.isEmpty()) loadCheckpoint(task, file);
}

void ModelController::loadCheckpoint(Task task, const QString& path) {
  userChosenTasks_.insert(task);  // a demo checkpoint found later does not replace the user's choice
  demoTasks_.erase(task);
  Q_EMIT demoTasksChanged();
  Q_EMIT message(tr("Loading the %1 model %2...").arg(taskLabel(task), QFileInfo(path).fileName()), 0);
  inference_->loadModel(task, path);
}

void ModelController::updateLabels() {
  QStringList names;
  // What the models run on once loaded; the chosen device and precision until then.
  QString device = inference_->device();
  QString dtype = inference_->dtype();
  for (const auto& [task, state] : inference_->models()) {
    if (state.path.isEmpty()) continue;
    names << QStringLiteral("%1: %2%3%4")
                 .arg(taskLabel(task), QFileInfo(state.path).fileName(),
                      demoTasks_.count(task) ? tr(" (untrained demo)") : QString(),
                      state.loaded ? QString() : tr(" (not loaded yet)"));
    if (state.loaded) {
      device = state.device;
      dtype = state.dtype;
    }
  }
  modelLabel_->setText(names.isEmpty() ? tr("no model") : names.join(QStringLiteral(", ")));
  QString where = device.isEmpty() || device == QStringLiteral("cpu") ? cpuThreads() : device.toUpper();
  if (!dtype.isEmpty()) where += QStringLiteral(", ") + dtype;
  deviceLabel_->setText(where);
}

void ModelController::setInputScale(double scale) {
  computeBar_->setInputScale(scale);
  QSettings().setValue(QStringLiteral("compute/inputScale"), scale);
  if (scale == inference_->inputScale()) return;
  inference_->setInputScale(scale);
  logger().info("models run at {:.0f}% of their native input size from now on", scale * 100);
}

void ModelController::setCompute(const QString& device, const QString& dtype) {
  const QString problem = unsupportedReason(device, dtype);
  if (!problem.isEmpty()) {
    logger().error("cannot run the models on {} in {}: {}", qUtf8Printable(device), qUtf8Printable(dtype),
                   qUtf8Printable(problem));
    Q_EMIT message(problem, kMessageMs);
    computeBar_->setCompute(inference_->device(), inference_->dtype());
    return;
  }
  computeBar_->setCompute(device, dtype);
  QSettings settings;
  settings.setValue(QStringLiteral("compute/device"), device);
  settings.setValue(QStringLiteral("compute/dtype"), dtype);
  if (device == inference_->device() && dtype == inference_->dtype()) return;
  bool reloading = false;
  for (const auto& [task, state] : inference_->models()) reloading = reloading || state.loaded;
  inference_->setCompute(device, dtype);
  logger().info("models run on {} in {} from now on", qUtf8Printable(device), qUtf8Printable(dtype));
  if (reloading) Q_EMIT message(tr("Loading the models on %1 in %2...").arg(device, dtype), 0);
  updateLabels();
}

}  // namespace sapiens::studio
