#pragma once
// The Fine-tuning dock: a label set (create one from the pictures shown in the main window, open one,
// import the official seg layout, COCO keypoints or dense targets), edited in the Labels tab
// (LabelEditorTab), and a task head trained on it in the Training tab (TrainingTab). The panel joins them:
// it owns the label set and the FineTuneWorker's thread, keeps the training state, and forwards the
// worker's reports to the Training tab (queued signals: the GUI thread never waits on training). Problems
// are shown in the panel's message line and logged, never thrown.

#include "finetune_worker.h"
#include "training_state.h"

#include "sapiens/finetune/label_set.h"
#include "sapiens/model/task.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QImage>
#include <QString>
#include <QStringList>
#include <QThread>
#include <QThreadPool>
#include <QWidget>

#include <atomic>
#include <functional>
#include <map>
#include <optional>

class QLabel;
class QTabWidget;

namespace sapiens::widgets {
class LabelCanvas;
class LossChart;
}  // namespace sapiens::widgets

namespace sapiens::studio {

class LabelEditorTab;
class TrainingTab;

class FineTunePanel : public QWidget {
  Q_OBJECT

 public:
  using TrainingState = studio::TrainingState;

  explicit FineTunePanel(QWidget* parent = nullptr);
  /// Saves pending edits, cancels an import, stops training (in a backbone pass too) and waits for the
  /// import's current picture and the worker's current step.
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
  // Imports run off the GUI thread, one at a time: true when one started; importFinished follows (ok, or
  // failed, or cancelled: the message line says which).
  bool importOfficialSegLayout(const QString& source, const QString& destination);
  bool importCocoKeypoints(const QString& cocoPath, const QString& imageFolder, const QString& destination);
  bool importDenseTargets(Task task, const QString& imageFolder, const QString& targetFolder,
                          const QString& destination);
  /// Stops the import under way before its next picture (what it wrote so far stays): importFinished(false)
  /// follows, and the set on show stays.
  void cancelImport();
  /// Adds the picture on display as a new frame: labels from the displayed result when `fromPrediction`
  /// (and there is one for the set's task), else empty.
  bool addCurrentPicture(bool fromPrediction);
  void selectFrame(int index);
  int currentFrame() const;
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
  /// What quitting would stop, for the quit question: a fine-tuning run, a label import.
  QStringList workUnderWay() const;
  /// Quitting: the labels saved now, an import cancelled, the run stopped (in a backbone pass too, which
  /// ends it as stopped); no failure dialog opens from now on.
  void stopForQuitting();
  TrainingSettings trainingSettings() const;

  LabelEditorTab* labelEditor() const { return labelTab_; }
  TrainingTab* trainingTab() const { return trainingTab_; }
  widgets::LabelCanvas* canvas() const;
  widgets::LossChart* lossChart() const;
  widgets::LossChart* metricChart() const;
  /// The latest preview of the head's prediction (null before the first one after training began).
  QImage previewImage() const;
  /// The head's prediction before the first step of the run (null before training).
  QImage previewBeforeImage() const;
  /// The message line (errors and notes).
  QString message() const;
  /// What the panel does when the worker reports a diverged run (FineTuneWorker::diverged): a dialog
  /// naming the step and the head that was kept, the message line, and the state of a stopped run (the
  /// kept head can be saved, or trained further once the rate is lowered).
  Q_INVOKABLE void showDivergence(int step, int keptStep, const QString& message);

 Q_SIGNALS:
  void labelSetChanged(const QString& folder);
  /// An import ended: the set on show is the imported one when `ok`, else the message says why not.
  void importFinished(bool ok);
  /// The labels of frame `index` were written to disk.
  void autosaved(int index);
  /// Frame `index` is on show in the label editor (it is read off the GUI thread).
  void frameShown(int index);
  void trainingStateChanged(sapiens::studio::TrainingState state);
  void modelSaved(const QString& path, const QString& error);
  /// A message for the user (`error`: something failed).
  void messageShown(const QString& text, bool error);

 private:
  void connectLabelEditor();
  void connectTrainingTab();
  void connectWorker();
  void showMessage(const QString& text, bool error);
  void setLabelSet(LabelSet labels);
  /// An import given the cancel poll it passes on to core's import.
  using LabelImport = std::function<LabelSet(const std::function<bool()>& isCancelled)>;
  bool importLabels(const QString& what, const QString& destination, LabelImport import);
  void setState(TrainingState state);
  void updateButtons();
  QString baseModelFor(Task task) const;

  std::optional<LabelSet> labels_;
  QString picturePath_;
  cv::Mat picture_;
  std::optional<FrameResult> result_;
  std::function<QString(Task)> modelLookup_;
  std::map<Task, QString> chosenModels_;
  TrainingState state_ = TrainingState::Idle;
  QThread thread_;
  FineTuneWorker* worker_ = nullptr;
  QThreadPool imports_;  // one at a time; waited for by the destructor
  bool importing_ = false;
  std::atomic<bool> importCancelled_{false};  // polled by the import before each picture
  bool quitting_ = false;

  QTabWidget* tabs_ = nullptr;
  LabelEditorTab* labelTab_ = nullptr;
  TrainingTab* trainingTab_ = nullptr;
  QLabel* message_ = nullptr;
};

}  // namespace sapiens::studio
