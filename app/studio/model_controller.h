#pragma once
// The task models of the studio: the Models menu, the Compute toolbar (device, precision, resolution),
// the checkpoints found under the checkpoint root (core's resolveTaskCheckpoints, off the GUI thread),
// the untrained demo weights for tasks without one, and the status-bar labels that name the models and
// where they run.

#include "sapiens/model/task.h"
#include "sapiens/model/task_checkpoints.h"

#include <QObject>
#include <QPointer>
#include <QString>

#include <set>
#include <vector>

class QAction;
class QLabel;
class QMenuBar;
class QThreadPool;
class QWidget;

namespace sapiens::studio {

class CheckpointJobs;
class ComputeToolBar;
class InferenceSession;
class ModelBrowser;
class ModelManagerDialog;

class ModelController : public QObject {
  Q_OBJECT

 public:
  /// `window` parents the dialogs and the toolbar; `pool`'s owner waits for it before this goes.
  ModelController(QWidget* window, InferenceSession* inference, ModelBrowser* browser, QThreadPool* pool);

  ComputeToolBar* computeToolBar() const { return computeBar_; }
  QLabel* modelLabel() const { return modelLabel_; }
  QLabel* deviceLabel() const { return deviceLabel_; }
  /// The Models menu.
  void createMenu(QMenuBar* menuBar);
  /// The device, precision and resolution remembered from the last run (falling back to what this
  /// machine has).
  void restoreCompute();

  /// Looks for checkpoints of the tasks the user has not chosen one for (demo weights when none and the
  /// fallback is on); a run asked for meanwhile waits for it (runWhenReady). `replaceFound`: also tasks
  /// whose checkpoint was found before (the folder changed or files came or went).
  void discoverCheckpoints(bool replaceFound = false);
  /// The checkpoint folder: $SAPIENS_CHECKPOINT_ROOT when set, else the one chosen (Manage Models),
  /// else ~/sapiens2_host.
  QString checkpointRoot() const;
  /// Remembers `root` and uses the checkpoints found there from now on.
  void setCheckpointRoot(const QString& root);
  /// Models > Manage Models.
  void showModelManager();
  /// Opens Manage Models and queues downloads of these catalogue ids.
  void downloadCheckpoints(const QStringList& ids);
  /// Asks for a checkpoint folder (a dialog that does not block) and uses it once chosen.
  void chooseCheckpointFolder();
  /// Of the head tasks in `tasks`, those with no model (neither chosen, found nor demo weights).
  std::vector<Task> tasksWithoutModel(const std::vector<Task>& tasks) const;
  /// Demo weights for the tasks without a checkpoint; `remember`: also on the next start.
  void setDemoFallback(bool on, bool remember = true);
  CheckpointJobs* checkpointJobs() const { return jobs_; }
  /// Whether a lookup is under way; runRequested follows its end when runWhenReady was called.
  bool lookingUp() const { return lookups_ > 0; }
  void runWhenReady() { runAfterLookup_ = true; }
  void chooseCheckpoint(Task task);
  /// The user's checkpoint for `task` (a lookup leaves it alone from now on).
  void loadCheckpoint(Task task, const QString& path);
  void setCompute(const QString& device, const QString& dtype);
  void setInputScale(double scale);
  /// Tasks running on the untrained demo weights.
  const std::set<Task>& demoTasks() const { return demoTasks_; }
  void updateLabels();

 Q_SIGNALS:
  /// Models > Run Tasks, or a run that waited for a lookup.
  void runRequested();
  void demoTasksChanged();
  /// A checkpoint lookup ended (the models of the tasks may have changed).
  void lookupFinished();
  void modelReady(sapiens::Task task, const QString& path);
  void modelProblem(sapiens::Task task, const QString& reason);
  void message(const QString& text, int timeoutMs);

 private:
  /// `demoAsked`: the lookup asked for demo weights where no checkpoint is found.
  void useCheckpoints(const std::vector<TaskCheckpoint>& checkpoints, bool replaceFound, bool demoAsked);

  QWidget* window_;
  InferenceSession* inference_;
  ModelBrowser* browser_;
  QThreadPool* pool_;
  CheckpointJobs* jobs_;
  QPointer<ModelManagerDialog> manager_;
  ComputeToolBar* computeBar_;
  QLabel* modelLabel_;
  QLabel* deviceLabel_;
  QAction* demoFallbackAction_ = nullptr;
  std::set<Task> userChosenTasks_;  // checkpoints the user loaded: discovery leaves them alone
  std::set<Task> demoTasks_;
  int lookups_ = 0;              // lookups in flight
  bool runAfterLookup_ = false;  // a run was asked for during one
};

}  // namespace sapiens::studio
