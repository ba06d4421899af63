#pragma once
// Models > Manage Models: every checkpoint of a catalogue (core's zoo, or another one) with its task,
// model size, the size the server announces, its state (missing, queued, downloading n %, checking,
// valid, invalid and why) and path. Downloads queue up with progress per file and overall, rate and time
// left, and can be cancelled and resumed; Verify compares a file with the hub's SHA-256; Remove moves
// files to the trash; Show in Folder opens the file manager; the checkpoint folder is chosen here unless
// $SAPIENS_CHECKPOINT_ROOT decides it. The work runs in CheckpointJobs, off the GUI thread.

#include "checkpoint_jobs.h"

#include "sapiens/model/model_zoo.h"

#include <QDialog>
#include <QString>

#include <map>
#include <vector>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace sapiens::studio {

class ModelManagerDialog : public QDialog {
  Q_OBJECT

 public:
  enum Column { IdColumn, TaskColumn, ModelSizeColumn, DownloadSizeColumn, StateColumn, PathColumn };

  ModelManagerDialog(CheckpointJobs* jobs, std::vector<zoo::Entry> catalogue, const QString& root,
                     QWidget* parent = nullptr);

  QString root() const { return root_; }
  /// Shows `root` and checks the files there again; the work still queued for the old folder is dropped.
  void setRoot(const QString& root);
  /// Queues downloads of these catalogue ids (the Download button does it for the selected rows).
  void download(const QStringList& ids);
  /// Checks the files present and asks the server for the sizes again.
  void refresh();

 Q_SIGNALS:
  /// The user chose another checkpoint folder here.
  void rootChosen(const QString& root);
  /// A download was placed or a file removed: the models in use may change.
  void checkpointsChanged();

 private:
  struct Row {
    zoo::Entry entry;
    zoo::FileState state = zoo::FileState::Missing;
    quint64 partialBytes = 0;
    QString problem;
    qint64 announcedBytes = -1;
    QString announcedSha256;
    QString probeError;
    bool probing = false;
    bool checked = false;
    QString activity;  ///< "queued", "downloading 42 %", ... while a job runs for it
    quint64 received = 0;
    quint64 total = 0;
  };

  void buildTable();
  void connectJobs();
  void updateRow(const QString& id);
  void updateOverall();
  void updateButtons();
  void onFinished(const QString& id, const QString& root, CheckpointJobs::Kind kind, bool ok, bool cancelled,
                  const QString& message);
  void showFailure(const QString& title, const QString& file, const QString& cause);
  QStringList selectedIds() const;
  void verifySelected();
  void removeSelected();
  void showSelectedInFolder();
  void chooseRoot();
  QString pathOf(const Row& row) const;
  /// The row of catalogue id `id`, or nullptr.
  Row* rowOf(const QString& id);

  CheckpointJobs* jobs_;
  QString root_;
  std::vector<QString> order_;  // ids in catalogue order
  std::map<QString, Row> rows_;
  QStringList batch_;  // downloads since the queue was last empty, for the overall progress
  double rate_ = 0;
  QLineEdit* rootEdit_;
  QLabel* rootNote_;
  QPushButton* chooseRootButton_;
  QTableWidget* table_;
  QProgressBar* overallBar_;
  QLabel* overallLabel_;
  QLabel* resultLabel_;  ///< what the last download or verification ended with
  QPushButton* downloadButton_;
  QPushButton* verifyButton_;
  QPushButton* removeButton_;
  QPushButton* showButton_;
  QPushButton* cancelButton_;
};

}  // namespace sapiens::studio
