#pragma once
// The Training tab of the fine-tuning panel: the settings of a run (the checkpoint to start from, steps,
// batch, learning rate, input size, evaluation and snapshot intervals, fresh head, flip variants), its
// buttons (train, pause/resume, stop, continue, save), and how it is going: progress, step rate and time
// left, the learning rate in use (given, or chosen by the range test), the loss and metric curves, the
// prediction on the preview frame before and after training, and a warning when the validation loss
// rises (over-fitting, see OverfittingMonitor; logged once a run). It shows what FineTunePanel forwards
// from the worker and asks for actions through signals; it never talks to the worker itself.

#include "training_state.h"

#include "sapiens/finetune/overfitting_monitor.h"
#include "sapiens/finetune/training_settings.h"
#include "sapiens/model/task.h"

#include <QImage>
#include <QString>
#include <QWidget>

#include <map>
#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace sapiens::widgets {
class LossChart;
}

namespace sapiens::studio {

class PredictionPreview;

class TrainingTab : public QWidget {
  Q_OBJECT

 public:
  explicit TrainingTab(QWidget* parent = nullptr);

  /// The run's settings as the form gives them (snapshotFolder left empty: the panel knows the set's
  /// folder; the input size is the default's when the field does not parse).
  TrainingSettings settings() const;
  /// The input size field, when it is HxW in multiples of 16.
  std::optional<InputSize> inputSize() const;
  QString inputSizeText() const;
  QString baseModel() const;
  void setBaseModel(const QString& path);
  /// What Save Model suggests: a file in `folder` named after `task` and the step.
  void setSaveTarget(const QString& folder, Task task);
  /// The buttons follow the state; Train also needs `canTrain` (a label set with frames).
  void setState(TrainingState state, bool canTrain);

  // What the worker reports, forwarded by the panel.
  /// A new run of `settings`: the curves, previews, rate and warning cleared.
  void beginRun(const TrainingSettings& settings);
  void showStatus(const QString& text);
  void showPreparing(qulonglong done, qulonglong total);
  void showTrainingStarted(const QString& metricName, bool higherIsBetter, int totalSteps, int startStep);
  void showLearningRate(double rate, const QString& trials);
  void showProgress(int step, int totalSteps, double trainLoss, double learningRate, double stepsPerSecond,
                    double secondsLeft, bool evaluated, double evalLoss, double evalMetric, bool onValidation,
                    const QString& snapshot);
  void showPreview(const QImage& image, int step, bool heldOut, bool beforeTraining);
  void showPausedAt(int step);
  void showFinished(bool stopped, int steps);

  widgets::LossChart* lossChart() const { return lossChart_; }
  widgets::LossChart* metricChart() const { return metricChart_; }
  PredictionPreview* preview() const { return preview_; }
  /// "Learning rate 3e-02 (chosen by a range test: ...)" or "Learning rate 1e-03 (given)".
  QString learningRateText() const;
  /// The over-fitting warning on show, "" when there is none.
  QString overfittingWarning() const;
  const OverfittingMonitor& overfittingMonitor() const { return overfitting_; }

 Q_SIGNALS:
  void trainRequested();
  void pauseRequested();
  void resumeRequested();
  void stopRequested();
  void continueRequested();
  void saveRequested(const QString& path, bool fullModel);
  /// A checkpoint picked with Browse...
  void baseModelChosen(const QString& path);
  /// A note for the panel's message line (a snapshot written).
  void messageShown(const QString& text, bool error);

 private:
  QWidget* createSettingsForm();
  QWidget* createButtons();
  void chooseBaseModel();
  void chooseSaveModel();
  void updateOverfittingWarning();

  TrainingState state_ = TrainingState::Idle;
  QString metricName_;
  QString saveFolder_;
  Task saveTask_ = Task::Seg;
  OverfittingMonitor overfitting_;
  bool overfittingLogged_ = false;
  std::map<int, QString> snapshots_;  // step -> file, this run's

  QLineEdit* baseModel_ = nullptr;
  QSpinBox* steps_ = nullptr;
  QSpinBox* batch_ = nullptr;
  QDoubleSpinBox* learningRate_ = nullptr;
  QLineEdit* inputSize_ = nullptr;
  QSpinBox* evaluateEvery_ = nullptr;
  QSpinBox* snapshotEvery_ = nullptr;
  QCheckBox* freshHead_ = nullptr;
  QCheckBox* keepUntaught_ = nullptr;
  QCheckBox* flip_ = nullptr;
  QComboBox* precision_ = nullptr;
  QPushButton* train_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* continue_ = nullptr;
  QPushButton* save_ = nullptr;
  QCheckBox* fullModel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* stats_ = nullptr;
  QLabel* learningRateUsed_ = nullptr;
  QLabel* overfittingWarning_ = nullptr;
  widgets::LossChart* lossChart_ = nullptr;
  widgets::LossChart* metricChart_ = nullptr;
  PredictionPreview* preview_ = nullptr;
  int trainSeries_ = 0, evalSeries_ = 0, metricSeries_ = 0;
};

}  // namespace sapiens::studio
