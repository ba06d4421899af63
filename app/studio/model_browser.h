#pragma once
// The Models dock: the checkpoint root (sapiens::paths::checkpointRoot()) and the .safetensors files
// found in each task folder (pose/, seg/, normal/, pointmap/, ...), with their sizes.

#include <QString>
#include <QTreeWidget>

namespace sapiens::studio {

class ModelBrowser : public QTreeWidget {
  Q_OBJECT

 public:
  explicit ModelBrowser(QWidget* parent = nullptr);

  void setRoot(const QString& root);
  QString root() const { return root_; }
  /// Scans the root again.
  void refresh();
  /// Number of checkpoint files found by the last scan.
  int checkpointCount() const { return checkpointCount_; }

 private:
  QString root_;
  int checkpointCount_ = 0;
};

}  // namespace sapiens::studio
