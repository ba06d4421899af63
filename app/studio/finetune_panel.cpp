#include "finetune_panel.h"

#include "background_work.h"
#include "failure_dialog.h"
#include "label_canvas.h"
#include "label_editor_tab.h"
#include "picture_frame.h"
#include "prediction_preview.h"
#include "task_set.h"
#include "training_tab.h"

#include "sapiens/common/log.h"
#include "sapiens/finetune/frame_labels.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QMetaObject>
#include <QTabWidget>
#include <QVBoxLayout>

#include <exception>
#include <utility>

namespace sapiens::studio {

namespace {

std::string utf8(const QString& text) {
  return text.toStdString();
}

QString qs(const std::string& text) {
  return QString::fromStdString(text);
}

}  // namespace

FineTunePanel::FineTunePanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("fineTunePanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("fineTuneTabs"));
  labelTab_ = new LabelEditorTab;
  labelTab_->setObjectName(QStringLiteral("fineTuneLabelTab"));
  trainingTab_ = new TrainingTab;
  trainingTab_->setObjectName(QStringLiteral("fineTuneTrainingTab"));
  tabs_->addTab(labelTab_, tr("&Labels"));
  tabs_->addTab(trainingTab_, tr("&Training"));
  layout->addWidget(tabs_, 1);
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("fineTuneMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(message_);

  imports_.setMaxThreadCount(1);
  thread_.setObjectName(QStringLiteral("finetune"));
  worker_ = new FineTuneWorker;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connectLabelEditor();
  connectTrainingTab();
  connectWorker();
  thread_.start(QThread::LowPriority);
  updateButtons();
}

QStringList FineTunePanel::workUnderWay() const {
  QStringList work;
  if (isRunning(state_)) work << tr("a fine-tuning run");
  if (importing_) work << tr("a label import");
  return work;
}

void FineTunePanel::stopForQuitting() {
  quitting_ = true;
  cancelImport();
  saveNow();
  worker_->abandon();
}

FineTunePanel::~FineTunePanel() {
  stopForQuitting();
  imports_.waitForDone();  // the cancelled import's current picture
  // The Labels tab is one of the children that ~QWidget deletes, after labels_ is gone: it lets go of the
  // set now, so that nothing it does on its way out (its own save) reaches the set. Edits that the save
  // above could not write (a file that can no longer be written) were reported; they are not tried again.
  labelTab_->setLabelSet(nullptr);
  thread_.quit();
  thread_.wait();
}

void FineTunePanel::connectLabelEditor() {
  LabelEditorTab* tab = labelTab_;
  connect(tab, &LabelEditorTab::autosaved, this, &FineTunePanel::autosaved);
  connect(tab, &LabelEditorTab::frameShown, this, &FineTunePanel::frameShown);
  connect(tab, &LabelEditorTab::messageShown, this, &FineTunePanel::showMessage);
  connect(tab, &LabelEditorTab::createRequested, this, &FineTunePanel::createLabelSet);
  connect(tab, &LabelEditorTab::openRequested, this, &FineTunePanel::openLabelSetFolder);
  connect(tab, &LabelEditorTab::importSegRequested, this, &FineTunePanel::importOfficialSegLayout);
  connect(tab, &LabelEditorTab::importCocoRequested, this, &FineTunePanel::importCocoKeypoints);
  connect(tab, &LabelEditorTab::importDenseRequested, this, &FineTunePanel::importDenseTargets);
  connect(tab, &LabelEditorTab::addPictureRequested, this, &FineTunePanel::addCurrentPicture);
}

void FineTunePanel::connectTrainingTab() {
  TrainingTab* tab = trainingTab_;
  connect(tab, &TrainingTab::trainRequested, this, &FineTunePanel::startTraining);
  connect(tab, &TrainingTab::pauseRequested, this, &FineTunePanel::pauseTraining);
  connect(tab, &TrainingTab::resumeRequested, this, &FineTunePanel::resumeTraining);
  connect(tab, &TrainingTab::stopRequested, this, &FineTunePanel::stopTraining);
  connect(tab, &TrainingTab::continueRequested, this, &FineTunePanel::continueTraining);
  connect(tab, &TrainingTab::saveRequested, this, &FineTunePanel::saveModel);
  connect(tab, &TrainingTab::messageShown, this, &FineTunePanel::showMessage);
  connect(tab, &TrainingTab::baseModelChosen, this, [this](const QString& path) {
    if (labels_) chosenModels_[labels_->task] = path;
  });
}

void FineTunePanel::connectWorker() {
  // Worker signals cross threads: queued, so these run on the GUI thread.
  TrainingTab* tab = trainingTab_;
  connect(worker_, &FineTuneWorker::status, tab, &TrainingTab::showStatus);
  connect(worker_, &FineTuneWorker::preparing, tab, &TrainingTab::showPreparing);
  connect(worker_, &FineTuneWorker::learningRateChosen, tab, &TrainingTab::showLearningRate);
  connect(worker_, &FineTuneWorker::trainingStarted, this,
          [this](const QString& metric, bool higherIsBetter, int totalSteps, int startStep) {
            trainingTab_->showTrainingStarted(metric, higherIsBetter, totalSteps, startStep);
            if (state_ != TrainingState::Paused) setState(TrainingState::Training);
          });
  connect(worker_, &FineTuneWorker::progress, tab, &TrainingTab::showProgress);
  connect(worker_, &FineTuneWorker::preview, tab, &TrainingTab::showPreview);
  connect(worker_, &FineTuneWorker::pausedAt, tab, &TrainingTab::showPausedAt);
  connect(worker_, &FineTuneWorker::finished, this, [this](bool stopped, int steps, const QString& summary) {
    trainingTab_->showFinished(stopped, steps);
    showMessage(summary, false);
    setState(stopped ? TrainingState::Stopped : TrainingState::Finished);
  });
  connect(worker_, &FineTuneWorker::failed, this, [this](const QString& reason) {
    showMessage(tr("Fine-tuning failed: %1").arg(reason), true);
    if (!quitting_)  // the window is going: logged, no dialog
      showFailure(this, tr("Fine-tuning failed"), labels_ ? qs(labels_->folder) : QString(), reason);
    setState(TrainingState::Failed);
  });
  connect(worker_, &FineTuneWorker::diverged, this, &FineTunePanel::showDivergence);
  connect(worker_, &FineTuneWorker::saved, this, [this](const QString& path, const QString& error) {
    if (error.isEmpty())
      showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), false);
    else
      showMessage(tr("Cannot save %1: %2").arg(QDir::toNativeSeparators(path), error), true);
    Q_EMIT modelSaved(path, error);
  });
}

void FineTunePanel::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #d9534f;") : QString());
  if (error)
    logger().warn("Fine-tuning panel: {}", utf8(text));
  else
    logger().info("Fine-tuning panel: {}", utf8(text));
  Q_EMIT messageShown(text, error);
}

widgets::LabelCanvas* FineTunePanel::canvas() const {
  return labelTab_->canvas();
}

widgets::LossChart* FineTunePanel::lossChart() const {
  return trainingTab_->lossChart();
}

widgets::LossChart* FineTunePanel::metricChart() const {
  return trainingTab_->metricChart();
}

QImage FineTunePanel::previewImage() const {
  return trainingTab_->preview()->afterImage();
}

QImage FineTunePanel::previewBeforeImage() const {
  return trainingTab_->preview()->beforeImage();
}

QString FineTunePanel::message() const {
  return message_->text();
}

void FineTunePanel::setCurrentPicture(const QString& path, const cv::Mat& bgr) {
  if (path != picturePath_) result_.reset();
  picturePath_ = path;
  picture_ = bgr;
  updateButtons();
}

void FineTunePanel::setCurrentResult(const FrameResult* result) {
  if (result)
    result_ = *result;
  else
    result_.reset();
}

void FineTunePanel::setModelLookup(std::function<QString(Task)> lookup) {
  modelLookup_ = std::move(lookup);
}

// Label sets

int FineTunePanel::currentFrame() const {
  return labelTab_->currentFrame();
}

void FineTunePanel::selectFrame(int index) {
  labelTab_->selectFrame(index);
}

bool FineTunePanel::saveNow() {
  return labelTab_->saveNow();
}

void FineTunePanel::setAutosaveDelay(int milliseconds) {
  labelTab_->setAutosaveDelay(milliseconds);
}

bool FineTunePanel::createLabelSet(const QString& folder, Task task) {
  if (task == Task::Backbone) {
    showMessage(tr("A label set needs a task with a head (seg, pose, normal, albedo, pointmap)"), true);
    return false;
  }
  try {
    labelTab_->saveNow();  // a frame still being added may be writing this folder's manifest
    if (QFileInfo::exists(QDir(folder).filePath(QString::fromLatin1(kLabelSetManifest))))
      return openLabelSetFolder(folder);
    LabelSet labels;
    labels.folder = utf8(folder);
    labels.task = task;
    saveLabelSet(labels);
    setLabelSet(std::move(labels));
    showMessage(tr("Created a %1 label set in %2").arg(taskLabel(task), QDir::toNativeSeparators(folder)),
                false);
    return true;
  } catch (const std::exception& e) {
    showMessage(tr("Cannot create the label set: %1").arg(qs(e.what())), true);
    return false;
  }
}

bool FineTunePanel::openLabelSetFolder(const QString& folder) {
  try {
    labelTab_->saveNow();  // a frame still being added may be writing this folder's manifest
    setLabelSet(openLabelSet(utf8(folder)));
    showMessage(tr("Opened %1 (%2 frames)").arg(QDir::toNativeSeparators(folder)).arg(labels_->frames.size()),
                false);
    return true;
  } catch (const std::exception& e) {
    showMessage(tr("Cannot open the label set: %1").arg(qs(e.what())), true);
    return false;
  }
}

bool FineTunePanel::importOfficialSegLayout(const QString& source, const QString& destination) {
  return importLabels(tr("the seg layout"), destination,
                      [source = utf8(source), destination = utf8(destination)](const auto& isCancelled) {
                        return sapiens::importOfficialSegLayout(source, destination, isCancelled);
                      });
}

bool FineTunePanel::importCocoKeypoints(const QString& cocoPath, const QString& imageFolder,
                                        const QString& destination) {
  return importLabels(tr("the COCO keypoints"), destination,
                      [coco = utf8(cocoPath), images = utf8(imageFolder),
                       destination = utf8(destination)](const auto& isCancelled) {
                        return sapiens::importCocoKeypoints(coco, images, destination, isCancelled);
                      });
}

bool FineTunePanel::importDenseTargets(Task task, const QString& imageFolder, const QString& targetFolder,
                                       const QString& destination) {
  return importLabels(tr("the %1 targets").arg(taskLabel(task)), destination,
                      [task, images = utf8(imageFolder), targets = utf8(targetFolder),
                       destination = utf8(destination)](const auto& isCancelled) {
                        return sapiens::importDenseTargets(task, images, targets, destination, isCancelled);
                      });
}

void FineTunePanel::cancelImport() {
  if (importing_) importCancelled_ = true;
}

bool FineTunePanel::importLabels(const QString& what, const QString& destination, LabelImport import) {
  if (importing_) {
    showMessage(tr("Cannot import %1: another import is under way").arg(what), true);
    return false;
  }
  importing_ = true;
  importCancelled_ = false;
  showMessage(tr("Importing %1 into %2...").arg(what, QDir::toNativeSeparators(destination)), false);
  // Every picture is decoded and checked: off the GUI thread, stopping before the next picture once
  // cancelled (the destructor waits for the pool: the flag outlives the import). Cancelled: no set, no error.
  const std::atomic<bool>* cancelled = &importCancelled_;
  runInBackground(
      imports_, this,
      [import = std::move(import), cancelled]() -> std::optional<LabelSet> {
        try {
          return import([cancelled] { return cancelled->load(); });
        } catch (const LabelImportCancelled&) {
          return std::nullopt;
        }
      },
      [this, what, destination](std::optional<LabelSet> labels, const QString& error) {
        importing_ = false;
        if (!labels && error.isEmpty()) {
          showMessage(tr("Import of %1 cancelled").arg(what), false);
          Q_EMIT importFinished(false);
          return;
        }
        if (!labels) {
          showMessage(tr("Cannot import %1: %2").arg(what, error), true);
          Q_EMIT importFinished(false);
          return;
        }
        setLabelSet(std::move(*labels));
        showMessage(tr("Imported %1 frames into %2")
                        .arg(labels_->frames.size())
                        .arg(QDir::toNativeSeparators(destination)),
                    false);
        Q_EMIT importFinished(true);
      });
  return true;
}

void FineTunePanel::setLabelSet(LabelSet labels) {
  labelTab_->saveNow();  // the frame on show belongs to the set being replaced
  labels_ = std::move(labels);
  labelTab_->setLabelSet(&*labels_);
  const Task task = labels_->task;
  trainingTab_->setBaseModel(chosenModels_.count(task) ? chosenModels_.at(task) : baseModelFor(task));
  trainingTab_->setSaveTarget(qs(labels_->folder), task);
  if (state_ == TrainingState::Stopped || state_ == TrainingState::Finished ||
      state_ == TrainingState::Failed) {
    // The head trained on the previous set is not continued on this one (a running one carries on).
    FineTuneWorker* worker = worker_;
    QMetaObject::invokeMethod(
        worker, [worker] { worker->discard(); }, Qt::QueuedConnection);
    setState(TrainingState::Idle);
  }
  updateButtons();
  Q_EMIT labelSetChanged(qs(labels_->folder));
}

bool FineTunePanel::addCurrentPicture(bool fromPrediction) {
  if (!labels_) {
    showMessage(tr("Create or open a label set first"), true);
    return false;
  }
  if (picture_.empty()) {
    showMessage(tr("No picture on display to add"), true);
    return false;
  }
  const PictureFrame made = pictureFrame(*labels_, picture_, result_ ? &*result_ : nullptr, fromPrediction);
  if (!made.frame) {
    showMessage(made.note, true);
    return false;
  }
  // The set's entry now, its files off the GUI thread (a large picture's PNG takes a while to encode).
  const int index = labelTab_->addFrameInBackground(utf8(newFrameName(*labels_, picturePath_)), *made.frame);
  showMessage(
      tr("Added %1 as frame %2%3").arg(QFileInfo(picturePath_).fileName()).arg(index + 1).arg(made.note),
      false);
  updateButtons();
  return true;
}

// Training

QString FineTunePanel::baseModelFor(Task task) const {
  return modelLookup_ ? modelLookup_(task) : QString();
}

TrainingSettings FineTunePanel::trainingSettings() const {
  TrainingSettings settings = trainingTab_->settings();
  if (labels_ && settings.snapshotEvery > 0)
    settings.snapshotFolder = utf8(QDir(qs(labels_->folder)).filePath(QStringLiteral("snapshots")));
  return settings;
}

void FineTunePanel::startTraining() {
  if (isRunning(state_)) return;
  if (!labels_) return showMessage(tr("Create or open a label set first"), true);
  if (labels_->frames.empty()) return showMessage(tr("The label set has no frames yet"), true);
  if (!trainingTab_->inputSize())
    return showMessage(tr("Input size '%1' is not HxW in multiples of 16").arg(trainingTab_->inputSizeText()),
                       true);
  QString model = trainingTab_->baseModel();
  if (model.isEmpty()) model = baseModelFor(labels_->task);
  if (model.isEmpty())
    return showMessage(tr("Choose the %1 checkpoint to start from").arg(taskLabel(labels_->task)), true);
  if (!saveNow()) return;  // training reads the frames from disk
  FineTuneJob job{qs(labels_->folder), model, trainingSettings()};
  chosenModels_[labels_->task] = model;
  trainingTab_->beginRun(job.settings);
  setState(TrainingState::Preparing);
  showMessage(tr("Training the %1 head from %2").arg(taskLabel(labels_->task), QFileInfo(model).fileName()),
              false);
  FineTuneWorker* worker = worker_;
  worker->rearm();
  QMetaObject::invokeMethod(
      worker, [worker, job] { worker->train(job); }, Qt::QueuedConnection);
}

void FineTunePanel::pauseTraining() {
  if (state_ != TrainingState::Training && state_ != TrainingState::Preparing) return;
  worker_->pause();
  setState(TrainingState::Paused);
}

void FineTunePanel::resumeTraining() {
  if (state_ != TrainingState::Paused) return;
  worker_->resume();
  setState(TrainingState::Training);
}

void FineTunePanel::stopTraining() {
  if (state_ != TrainingState::Training && state_ != TrainingState::Preparing &&
      state_ != TrainingState::Paused)
    return;
  worker_->stop();
  setState(TrainingState::Stopping);
}

void FineTunePanel::continueTraining() {
  if (state_ != TrainingState::Stopped) return;
  FineTuneWorker* worker = worker_;
  worker->rearm();
  setState(TrainingState::Training);
  QMetaObject::invokeMethod(
      worker, [worker] { worker->continueTraining(); }, Qt::QueuedConnection);
}

void FineTunePanel::saveModel(const QString& path, bool fullModel) {
  worker_->requestSave(path, fullModel);
}

void FineTunePanel::showDivergence(int step, int keptStep, const QString& message) {
  const QString kept = keptStep > 0 ? tr("The head is the one after step %1, the last whose loss was finite: "
                                         "save it, or lower the learning rate and continue.")
                                          .arg(keptStep)
                                    : tr("The head is the one training started from: lower the learning "
                                         "rate and train again.");
  const QString text =
      tr("Step %1 made the loss or the head NaN or infinite, so training stopped. %2").arg(step).arg(kept);
  showMessage(tr("Training diverged at step %1: %2").arg(step).arg(message), true);
  auto* box = new QMessageBox(QMessageBox::Warning, tr("Training diverged"), text, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("fineTuneDivergedDialog"));
  box->setDetailedText(message);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal, without a nested event loop
  setState(TrainingState::Stopped);
}

void FineTunePanel::setState(TrainingState state) {
  state_ = state;
  updateButtons();
  Q_EMIT trainingStateChanged(state);
}

void FineTunePanel::updateButtons() {
  trainingTab_->setState(state_, labels_ && !labels_->frames.empty());
  labelTab_->setCanAddPicture(labels_.has_value() && !picture_.empty());
}

}  // namespace sapiens::studio
