#pragma once
// The Fine-tuning dock: a label set (create one from the pictures shown in the main window, open one,
// import the official seg layout or COCO keypoints), the labelling canvas with its tools, and training a
// task head on the set with live loss curves, the task metric, a preview of the predictions on a
// held-out frame, step rate and time left; pause, resume, stop; saving the model or its head, and
// versioned snapshots. Training runs on a FineTuneWorker thread; edits are saved automatically a moment
// after the last one (and when the frame changes, training starts or the panel goes). Problems are
// shown in the panel's message line and logged, never thrown.

#include "finetune_worker.h"

#include "sapiens/finetune/label_set.h"
#include "sapiens/model/task.h"
#include "sapiens/pipeline/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QString>
#include <QThread>
#include <QTimer>
#include <QWidget>

#include <functional>
#include <map>
#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QStackedWidget;
class QTabWidget;
class QToolButton;

namespace sapiens::widgets {
class LabelCanvas;
class LossChart;
}  // namespace sapiens::widgets

namespace sapiens::studio {

class FineTunePanel : public QWidget {
  Q_OBJECT

 public:
  enum class TrainingState { Idle, Preparing, Training, Paused, Stopping, Stopped, Finished, Failed };

  explicit FineTunePanel(QWidget* parent = nullptr);
  /// Saves pending edits, stops training and waits for the worker's current step.
  ~FineTunePanel() override;

  /// The picture on display in the main window (what "Add Picture" adds), and its results, if any (what
  /// "start from prediction" starts from).
  void setCurrentPicture(const QString& path, const cv::Mat& bgr);
  void setCurrentResult(const FrameResult* result);
  /// Where the checkpoint of a task is found when none was chosen here (the main window's models).
  void setModelLookup(std::function<QString(Task)> lookup);

  // Label sets (false and a message on failure).
  bool createLabelSet(const QString& folder, Task task);
  bool openLabelSetFolder(const QString& folder);
  bool importOfficialSegLayout(const QString& source, const QString& destination);
  bool importCocoKeypoints(const QString& cocoPath, const QString& imageFolder, const QString& destination);
  bool importDenseTargets(Task task, const QString& imageFolder, const QString& targetFolder,
                          const QString& destination);
  /// Adds the picture on display as a new frame: labels from the displayed result when `fromPrediction`
  /// (and there is one for the set's task), else empty.
  bool addCurrentPicture(bool fromPrediction);
  void selectFrame(int index);
  int currentFrame() const { return frame_; }
  const std::optional<LabelSet>& labelSet() const { return labels_; }
  /// Writes the current frame's edited labels now if they changed since the last save.
  bool saveNow();
  void setAutosaveDelay(int milliseconds);

  // Training.
  void startTraining();
  void pauseTraining();
  void resumeTraining();
  void stopTraining();
  /// After a stop: trains the same head further.
  void continueTraining();
  /// Writes the trained model (or its head) to `path` on the worker thread; modelSaved follows.
  void saveModel(const QString& path, bool fullModel);
  TrainingState trainingState() const { return state_; }
  TrainingSettings trainingSettings() const;

  widgets::LabelCanvas* canvas() const { return canvas_; }
  widgets::LossChart* lossChart() const { return lossChart_; }
  widgets::LossChart* metricChart() const { return metricChart_; }
  /// The latest preview of the head's prediction (null before training).
  QImage previewImage() const;
  /// The message line (errors and notes).
  QString message() const;

 Q_SIGNALS:
  void labelSetChanged(const QString& folder);
  /// The labels of frame `index` were written to disk.
  void autosaved(int index);
  void trainingStateChanged(sapiens::studio::FineTunePanel::TrainingState state);
  void modelSaved(const QString& path, const QString& error);
  /// A message for the user (`error`: something failed).
  void messageShown(const QString& text, bool error);

 private:
  QWidget* createLabelTab();
  QWidget* createTrainTab();
  void showMessage(const QString& text, bool error);
  void setLabelSet(LabelSet labels);
  bool importLabels(const QString& what, const QString& destination, const std::function<LabelSet()>& import);
  void refreshFrameList();
  void refreshClassList();
  void refreshKeypointTools();
  void applyKeypointFilter();
  void onEdited();
  void setState(TrainingState state);
  void updateButtons();
  void chooseNewLabelSet();
  void chooseOpenLabelSet();
  void chooseImportSeg();
  void chooseImportCoco();
  void chooseImportDense();
  void chooseBaseModel();
  void chooseSaveModel();
  QString frameNameFor(const QString& path) const;
  QString baseModelFor(Task task) const;
  void onProgress(int step, int totalSteps, double trainLoss, double learningRate, double stepsPerSecond,
                  double secondsLeft, bool evaluated, double evalLoss, double evalMetric, bool onValidation,
                  const QString& snapshot);

  // State.
  std::optional<LabelSet> labels_;
  int frame_ = -1;
  bool dirty_ = false;
  QString picturePath_;
  cv::Mat picture_;
  std::optional<FrameResult> result_;
  std::function<QString(Task)> modelLookup_;
  std::map<Task, QString> chosenModels_;
  TrainingState state_ = TrainingState::Idle;
  QString metricName_;
  QTimer autosave_;
  QThread thread_;
  FineTuneWorker* worker_ = nullptr;

  // Widgets.
  QTabWidget* tabs_ = nullptr;
  QLabel* setLabel_ = nullptr;
  QCheckBox* fromPrediction_ = nullptr;
  QPushButton* addPicture_ = nullptr;
  QListWidget* frames_ = nullptr;
  widgets::LabelCanvas* canvas_ = nullptr;
  QStackedWidget* toolPages_ = nullptr;
  QListWidget* classes_ = nullptr;
  QSpinBox* brushSize_ = nullptr;
  QSlider* opacity_ = nullptr;
  std::map<QString, QCheckBox*> groupBoxes_;
  QComboBox* keypoint_ = nullptr;
  QComboBox* person_ = nullptr;
  QCheckBox* placeHidden_ = nullptr;
  QLineEdit* baseModel_ = nullptr;
  QSpinBox* steps_ = nullptr;
  QSpinBox* batch_ = nullptr;
  QDoubleSpinBox* learningRate_ = nullptr;
  QLineEdit* inputSize_ = nullptr;
  QSpinBox* evaluateEvery_ = nullptr;
  QSpinBox* snapshotEvery_ = nullptr;
  QCheckBox* freshHead_ = nullptr;
  QCheckBox* flip_ = nullptr;
  QPushButton* train_ = nullptr;
  QPushButton* pause_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* continue_ = nullptr;
  QPushButton* save_ = nullptr;
  QCheckBox* fullModel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* stats_ = nullptr;
  widgets::LossChart* lossChart_ = nullptr;
  widgets::LossChart* metricChart_ = nullptr;
  class PreviewView;
  PreviewView* preview_ = nullptr;
  QLabel* previewCaption_ = nullptr;
  QLabel* message_ = nullptr;
  int trainSeries_ = 0, evalSeries_ = 0, metricSeries_ = 0;
};

}  // namespace sapiens::studio
