#include "training_tab.h"

#include "loss_chart.h"
#include "prediction_preview.h"
#include "task_set.h"

#include "sapiens/common/log.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>
#include <cstdlib>
#include <initializer_list>

namespace sapiens::studio {

namespace {

QString duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  return s >= 3600 ? QStringLiteral("%1h%2m").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
                   : QStringLiteral("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

// "3e-02", "2.5e-04": the fewest digits that give the rate back.
QString rateText(double rate) {
  for (int digits = 0; digits < 6; ++digits) {
    const QString text = QString::number(rate, 'e', digits);
    if (std::abs(text.toDouble() - rate) <= 1e-9 * std::abs(rate)) return text;
  }
  return QString::number(rate, 'e', 6);
}

}  // namespace

TrainingTab::TrainingTab(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(createSettingsForm());
  layout->addWidget(createButtons());

  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("fineTuneProgress"));
  progress_->setRange(0, 1);
  progress_->setValue(0);
  layout->addWidget(progress_);
  stats_ = new QLabel;
  stats_->setObjectName(QStringLiteral("fineTuneStats"));
  layout->addWidget(stats_);
  learningRateUsed_ = new QLabel;
  learningRateUsed_->setObjectName(QStringLiteral("fineTuneLearningRateUsed"));
  learningRateUsed_->setWordWrap(true);
  learningRateUsed_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(learningRateUsed_);
  overfittingWarning_ = new QLabel;
  overfittingWarning_->setObjectName(QStringLiteral("fineTuneOverfitting"));
  overfittingWarning_->setWordWrap(true);
  overfittingWarning_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Amber, readable on the light and the dark theme.
  overfittingWarning_->setStyleSheet(
      QStringLiteral("QLabel { color: #b9770e; background: rgba(243, 156, 18, 40); border: 1px solid "
                     "#e67e22; border-radius: 3px; padding: 4px; }"));
  overfittingWarning_->hide();
  layout->addWidget(overfittingWarning_);

  auto* charts = new QSplitter(Qt::Vertical);
  lossChart_ = new widgets::LossChart;
  lossChart_->setObjectName(QStringLiteral("fineTuneLossChart"));
  lossChart_->setTitle(tr("Loss"));
  trainSeries_ = lossChart_->addSeries(tr("train"), QColor(52, 152, 219));
  evalSeries_ = lossChart_->addSeries(tr("validation"), QColor(230, 126, 34));
  metricChart_ = new widgets::LossChart;
  metricChart_->setObjectName(QStringLiteral("fineTuneMetricChart"));
  metricChart_->setTitle(tr("Metric"));
  metricSeries_ = metricChart_->addSeries(tr("metric"), QColor(39, 174, 96));
  preview_ = new PredictionPreview;
  preview_->setObjectName(QStringLiteral("fineTunePredictionPreview"));
  charts->addWidget(lossChart_);
  charts->addWidget(metricChart_);
  charts->addWidget(preview_);
  layout->addWidget(charts, 1);
  setState(TrainingState::Idle, false);
}

QWidget* TrainingTab::createSettingsForm() {
  auto* box = new QWidget;
  auto* form = new QFormLayout(box);
  form->setContentsMargins(0, 0, 0, 0);
  auto* modelRow = new QHBoxLayout;
  baseModel_ = new QLineEdit;
  baseModel_->setObjectName(QStringLiteral("fineTuneBaseModel"));
  baseModel_->setAccessibleName(tr("Checkpoint to start from"));
  baseModel_->setPlaceholderText(tr("the loaded model of the set's task"));
  auto* browse = new QPushButton(tr("Browse..."));
  connect(browse, &QPushButton::clicked, this, &TrainingTab::chooseBaseModel);
  modelRow->addWidget(baseModel_, 1);
  modelRow->addWidget(browse);
  form->addRow(tr("Start from"), modelRow);

  const TrainingSettings defaults;
  steps_ = new QSpinBox;
  steps_->setObjectName(QStringLiteral("fineTuneSteps"));
  steps_->setAccessibleName(tr("Steps"));
  steps_->setRange(1, 1000000);
  steps_->setValue(defaults.steps);
  batch_ = new QSpinBox;
  batch_->setObjectName(QStringLiteral("fineTuneBatch"));
  batch_->setAccessibleName(tr("Batch size"));
  batch_->setRange(1, 256);
  batch_->setValue(defaults.batchSize);
  learningRate_ = new QDoubleSpinBox;
  learningRate_->setObjectName(QStringLiteral("fineTuneLearningRate"));
  learningRate_->setAccessibleName(tr("Learning rate"));
  learningRate_->setDecimals(6);
  learningRate_->setRange(0.0, 1.0);
  learningRate_->setSingleStep(1e-4);
  learningRate_->setSpecialValueText(tr("auto"));  // at 0: the range test picks it
  learningRate_->setValue(defaults.learningRate);
  learningRate_->setToolTip(
      tr("Peak learning rate. auto (0): before training, a few steps at each of several rates from the "
         "same head on your frames choose it"));
  inputSize_ =
      new QLineEdit(QStringLiteral("%1x%2").arg(defaults.inputSize.height).arg(defaults.inputSize.width));
  inputSize_->setObjectName(QStringLiteral("fineTuneInputSize"));
  inputSize_->setAccessibleName(tr("Input size"));
  inputSize_->setToolTip(tr("Network input HxW, multiples of 16"));
  evaluateEvery_ = new QSpinBox;
  evaluateEvery_->setObjectName(QStringLiteral("fineTuneEvaluateEvery"));
  evaluateEvery_->setAccessibleName(tr("Evaluate every"));
  evaluateEvery_->setRange(1, 100000);
  evaluateEvery_->setValue(defaults.evaluateEvery);
  snapshotEvery_ = new QSpinBox;
  snapshotEvery_->setObjectName(QStringLiteral("fineTuneSnapshotEvery"));
  snapshotEvery_->setAccessibleName(tr("Snapshot every"));
  snapshotEvery_->setRange(0, 1000000);
  snapshotEvery_->setSpecialValueText(tr("off"));
  snapshotEvery_->setToolTip(
      tr("Steps between versioned snapshots (head only) in the set's snapshots/ folder"));
  freshHead_ = new QCheckBox(tr("Fresh head"));
  freshHead_->setObjectName(QStringLiteral("fineTuneFreshHead"));
  keepUntaught_ = new QCheckBox(tr("Keep what is not labelled"));
  keepUntaught_->setObjectName(QStringLiteral("fineTuneKeepUntaught"));
  keepUntaught_->setChecked(defaults.keepUntaught);
  keepUntaught_->setToolTip(
      tr("Keypoints nobody placed and parts nobody painted keep the starting head's predictions: they are "
         "read from the starting head, kept beside a copy that learns what you labelled (the head doubles "
         "in width). Off: the whole head learns from your labels alone, and may change what you did not "
         "label. Not used with a fresh head."));
  flip_ = new QCheckBox(tr("Flip variants"));
  flip_->setObjectName(QStringLiteral("fineTuneFlip"));
  flip_->setChecked(defaults.horizontalFlip);
  precision_ = new QComboBox;
  precision_->setObjectName(QStringLiteral("fineTunePrecision"));
  precision_->setAccessibleName(tr("Precision"));
  precision_->addItem(tr("auto"), int(TrainingPrecision::Auto));
  precision_->addItem(tr("fp32"), int(TrainingPrecision::Float32));
  precision_->addItem(tr("bf16 (mixed)"), int(TrainingPrecision::BFloat16));
  precision_->setToolTip(
      tr("What the training steps compute in. auto: bf16 mixed precision where the CPU has native bf16 "
         "(faster, less memory; the weights stay float32), fp32 elsewhere"));
  auto* checks = new QHBoxLayout;
  checks->addWidget(freshHead_);
  checks->addWidget(keepUntaught_);
  checks->addWidget(flip_);
  checks->addStretch(1);
  form->addRow(tr("Steps"), steps_);
  form->addRow(tr("Batch"), batch_);
  form->addRow(tr("Learning rate"), learningRate_);
  form->addRow(tr("Input size"), inputSize_);
  form->addRow(tr("Evaluate every"), evaluateEvery_);
  form->addRow(tr("Snapshot every"), snapshotEvery_);
  form->addRow(tr("Precision"), precision_);
  form->addRow(checks);
  return box;
}

QWidget* TrainingTab::createButtons() {
  auto* box = new QWidget;
  auto* buttons = new QHBoxLayout(box);
  buttons->setContentsMargins(0, 0, 0, 0);
  train_ = new QPushButton(tr("Train"));
  train_->setObjectName(QStringLiteral("fineTuneTrain"));
  connect(train_, &QPushButton::clicked, this, &TrainingTab::trainRequested);
  pause_ = new QPushButton(tr("Pause"));
  pause_->setObjectName(QStringLiteral("fineTunePause"));
  connect(pause_, &QPushButton::clicked, this, [this] {
    if (state_ == TrainingState::Paused)
      Q_EMIT resumeRequested();
    else
      Q_EMIT pauseRequested();
  });
  stop_ = new QPushButton(tr("Stop"));
  stop_->setObjectName(QStringLiteral("fineTuneStop"));
  connect(stop_, &QPushButton::clicked, this, &TrainingTab::stopRequested);
  continue_ = new QPushButton(tr("Continue"));
  continue_->setObjectName(QStringLiteral("fineTuneContinue"));
  continue_->setToolTip(tr("Train the stopped head further"));
  connect(continue_, &QPushButton::clicked, this, &TrainingTab::continueRequested);
  save_ = new QPushButton(tr("Save Model..."));
  save_->setObjectName(QStringLiteral("fineTuneSave"));
  connect(save_, &QPushButton::clicked, this, &TrainingTab::chooseSaveModel);
  fullModel_ = new QCheckBox(tr("Full model"));
  fullModel_->setObjectName(QStringLiteral("fineTuneFullModel"));
  fullModel_->setToolTip(tr("The backbone too; otherwise the head alone (loaded over its base checkpoint)"));
  for (QWidget* w : std::initializer_list<QWidget*>{train_, pause_, stop_, continue_, save_, fullModel_})
    buttons->addWidget(w);
  buttons->addStretch(1);
  return box;
}

TrainingSettings TrainingTab::settings() const {
  TrainingSettings settings;
  settings.steps = steps_->value();
  settings.batchSize = batch_->value();
  settings.learningRate = learningRate_->value();
  if (const auto size = inputSize()) settings.inputSize = *size;
  settings.evaluateEvery = evaluateEvery_->value();
  settings.snapshotEvery = snapshotEvery_->value();
  settings.freshHead = freshHead_->isChecked();
  settings.keepUntaught = keepUntaught_->isChecked();
  settings.horizontalFlip = flip_->isChecked();
  settings.precision = static_cast<TrainingPrecision>(precision_->currentData().toInt());
  return settings;
}

std::optional<InputSize> TrainingTab::inputSize() const {
  return parseInputSize(inputSize_->text().toStdString());
}

QString TrainingTab::inputSizeText() const {
  return inputSize_->text();
}

QString TrainingTab::baseModel() const {
  return baseModel_->text().trimmed();
}

void TrainingTab::setBaseModel(const QString& path) {
  baseModel_->setText(path);
}

void TrainingTab::setSaveTarget(const QString& folder, Task task) {
  saveFolder_ = folder;
  saveTask_ = task;
}

void TrainingTab::setState(TrainingState state, bool canTrain) {
  const bool changed = state != state_;
  state_ = state;
  pause_->setText(state == TrainingState::Paused ? tr("Resume") : tr("Pause"));
  train_->setEnabled(!isRunning(state) && canTrain);
  pause_->setEnabled(state == TrainingState::Preparing || state == TrainingState::Training ||
                     state == TrainingState::Paused);
  stop_->setEnabled(pause_->isEnabled());
  continue_->setEnabled(state == TrainingState::Stopped);
  save_->setEnabled(state == TrainingState::Training || state == TrainingState::Paused ||
                    state == TrainingState::Stopped || state == TrainingState::Finished);
  if (changed && state == TrainingState::Paused) stats_->setText(tr("Pausing after the current step..."));
  if (changed && state == TrainingState::Stopping) stats_->setText(tr("Stopping after the current step..."));
}

void TrainingTab::beginRun(const TrainingSettings& settings) {
  lossChart_->clearPoints();
  metricChart_->clearPoints();
  preview_->clear();
  progress_->setValue(0);
  overfitting_.reset(settings.steps);
  overfittingLogged_ = false;
  snapshots_.clear();
  updateOverfittingWarning();
  learningRateUsed_->setText(settings.learningRate > 0
                                 ? tr("Learning rate %1 (given)").arg(rateText(settings.learningRate))
                                 : tr("Learning rate: auto (a range test chooses it before training)"));
}

void TrainingTab::showStatus(const QString& text) {
  stats_->setText(text);
}

void TrainingTab::showPreparing(qulonglong done, qulonglong total) {
  progress_->setRange(0, int(total));
  progress_->setValue(int(done));
  stats_->setText(tr("Computing backbone features: %1 of %2 samples").arg(done).arg(total));
}

void TrainingTab::showTrainingStarted(const QString& metricName, bool higherIsBetter, int totalSteps,
                                      int startStep) {
  metricName_ = metricName;
  metricChart_->setTitle(
      tr("%1 (%2 is better)").arg(metricName, higherIsBetter ? tr("higher") : tr("lower")));
  progress_->setRange(0, totalSteps);
  progress_->setValue(startStep);
}

void TrainingTab::showLearningRate(double rate, const QString& trials) {
  learningRateUsed_->setText(
      trials.isEmpty() ? tr("Learning rate %1 (given)").arg(rateText(rate))
                       : tr("Learning rate %1 (chosen by a range test: %2)").arg(rateText(rate), trials));
}

QString TrainingTab::learningRateText() const {
  return learningRateUsed_->text();
}

void TrainingTab::showProgress(int step, int totalSteps, double trainLoss, double learningRate,
                               double stepsPerSecond, double secondsLeft, bool evaluated, double evalLoss,
                               double evalMetric, bool onValidation, const QString& snapshot) {
  progress_->setRange(0, totalSteps);
  progress_->setValue(step);
  lossChart_->addPoint(trainSeries_, step, trainLoss);
  if (!snapshot.isEmpty()) snapshots_[step] = snapshot;
  if (evaluated) {
    lossChart_->setSeriesName(evalSeries_, onValidation ? tr("validation") : tr("eval (training frames)"));
    lossChart_->addPoint(evalSeries_, step, evalLoss);
    metricChart_->addPoint(metricSeries_, step, evalMetric);
    // Over-fitting is about frames the head does not train on.
    if (onValidation) {
      overfitting_.addEvaluation(step, evalLoss);
      updateOverfittingWarning();
    }
  }
  if (!snapshot.isEmpty())
    Q_EMIT messageShown(tr("Snapshot %1").arg(QDir::toNativeSeparators(snapshot)), false);
  if (state_ == TrainingState::Paused || state_ == TrainingState::Stopping) return;
  QString text = tr("Step %1/%2, %3 steps/s, %4 left, lr %5")
                     .arg(step)
                     .arg(totalSteps)
                     .arg(stepsPerSecond, 0, 'f', stepsPerSecond < 10 ? 2 : 1)
                     .arg(duration(secondsLeft))
                     .arg(learningRate, 0, 'e', 2);
  const QVector<QPointF> metric = metricChart_->points(metricSeries_);
  if (!metric.isEmpty())
    text += tr(", %1 %2 (%3)")
                .arg(metricName_)
                .arg(metric.back().y(), 0, 'f', 4)
                .arg(onValidation ? tr("validation") : tr("training frames"));
  stats_->setText(text);
}

void TrainingTab::updateOverfittingWarning() {
  if (!overfitting_.overfitting()) {
    overfittingWarning_->hide();
    overfittingWarning_->clear();
    return;
  }
  const int best = *overfitting_.bestStep();
  QString keep;
  if (!snapshots_.empty()) {
    // The snapshot nearest the best step.
    auto nearest = snapshots_.begin();
    for (auto it = snapshots_.begin(); it != snapshots_.end(); ++it)
      if (std::abs(it->first - best) < std::abs(nearest->first - best)) nearest = it;
    keep = tr("or use the snapshot of step %1 (%2)")
               .arg(nearest->first)
               .arg(QDir::toNativeSeparators(nearest->second));
  } else {
    keep = tr("or set Snapshot every to keep the head of the best step");
  }
  overfittingWarning_->setText(
      tr("Over-fitting: the validation loss has stayed above its best (%1 at step %2) for %3 steps. Train "
         "fewer steps (about %2), label more frames, %4.")
          .arg(overfitting_.bestLoss(), 0, 'f', 4)
          .arg(best)
          .arg(overfitting_.stepsAboveBest())
          .arg(keep));
  overfittingWarning_->show();
  if (!overfittingLogged_) {
    overfittingLogged_ = true;
    logger().warn("Fine-tuning: {}", overfittingWarning_->text().toStdString());
  }
}

QString TrainingTab::overfittingWarning() const {
  return overfittingWarning_->isHidden() ? QString() : overfittingWarning_->text();
}

void TrainingTab::showPreview(const QImage& image, int step, bool heldOut, bool beforeTraining) {
  const QString frame = heldOut ? tr("the held-out frame") : tr("the first training frame (none held out)");
  if (beforeTraining)
    preview_->setBefore(image, tr("Before training (step %1): %2").arg(step).arg(frame));
  else
    preview_->setAfter(image, tr("After step %1: %2").arg(step).arg(frame));
}

void TrainingTab::showPausedAt(int step) {
  if (state_ == TrainingState::Paused) stats_->setText(tr("Paused at step %1").arg(step));
}

void TrainingTab::showFinished(bool stopped, int steps) {
  stats_->setText(stopped ? tr("Stopped at step %1").arg(steps) : tr("Finished: %1 steps").arg(steps));
}

void TrainingTab::chooseBaseModel() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Checkpoint to Start From"), baseModel_->text(),
                                                    tr("Safetensors (*.safetensors);;All files (*)"));
  if (path.isEmpty()) return;
  baseModel_->setText(path);
  Q_EMIT baseModelChosen(path);
}

void TrainingTab::chooseSaveModel() {
  QString suggestion;
  if (!saveFolder_.isEmpty()) {
    suggestion = QDir(saveFolder_)
                     .filePath(QStringLiteral("finetuned-%1-step%2.safetensors")
                                   .arg(taskLabel(saveTask_))
                                   .arg(progress_->value()));
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Save Fine-tuned Model"), suggestion,
                                                    tr("Safetensors (*.safetensors)"));
  if (!path.isEmpty()) Q_EMIT saveRequested(path, fullModel_->isChecked());
}

}  // namespace sapiens::studio
