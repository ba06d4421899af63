#pragma once
// The banner over the picture when checked tasks have no checkpoint (a first run, an empty folder):
// which tasks and where the studio looked, and the three ways on: download the official files for them
// (core's starter set), choose a folder that has checkpoints, or run the untrained demo weights, which
// stay labelled as such wherever they are used.

#include "sapiens/model/task.h"

#include <QFrame>
#include <QString>

#include <vector>

class QLabel;
class QPushButton;

namespace sapiens::studio {

class FirstRunBanner : public QFrame {
  Q_OBJECT

 public:
  explicit FirstRunBanner(QWidget* parent = nullptr);

  /// Shows the banner for `tasks` without a checkpoint under `root`; hides it when there are none.
  void showMissing(const std::vector<Task>& tasks, const QString& root);
  /// The catalogue ids the download button fetches.
  QStringList downloadIds() const { return downloadIds_; }

 Q_SIGNALS:
  void downloadRequested(const QStringList& ids);
  void chooseFolderRequested();
  void demoWeightsRequested();

 private:
  QLabel* text_;
  QPushButton* download_;
  QPushButton* chooseFolder_;
  QPushButton* demo_;
  QStringList downloadIds_;
};

}  // namespace sapiens::studio
