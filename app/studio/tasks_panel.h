#pragma once
// The Tasks & Layers dock: which task models to run (and whether to run them as soon as an image
// opens), and how the results are drawn over the image: the part mask with its opacity and per-class
// visibility, keypoints with their confidence threshold and person boxes, and one dense map.

#include "task_set.h"

#include <QColor>
#include <QWidget>

#include <map>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QListWidget;
class QPushButton;
class QSlider;

namespace sapiens::studio {

/// The dense map drawn through the view's colour-map layer.
enum class DenseLayer { None, Normal, Albedo, Depth, Alpha, Cutout };

class TasksPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TasksPanel(QWidget* parent = nullptr);

  TaskSet selectedTasks() const;
  void setTaskSelected(Task task, bool selected);
  bool runsOnOpen() const;
  void setRunsOnOpen(bool on);

  bool maskVisible() const;
  double maskOpacity() const;
  /// seg29's palette with alpha 0 for background and for hidden classes.
  std::vector<QColor> maskPalette() const;
  void setClassVisible(int classIndex, bool visible);

  bool keypointsVisible() const;
  bool boxesVisible() const;
  double keypointThreshold() const;
  void setKeypointThreshold(double threshold);

  DenseLayer denseLayer() const;
  void setDenseLayer(DenseLayer layer);
  double denseOpacity() const;

  QPushButton* runButton() const { return run_; }

 Q_SIGNALS:
  void runRequested();
  void tasksChanged();
  /// Any drawing setting changed.
  void layersChanged();

 private:
  std::map<Task, QCheckBox*> taskChecks_;
  QCheckBox* runOnOpen_ = nullptr;
  QPushButton* run_ = nullptr;
  QCheckBox* mask_ = nullptr;
  QSlider* maskOpacity_ = nullptr;
  QListWidget* classes_ = nullptr;
  QCheckBox* keypoints_ = nullptr;
  QCheckBox* boxes_ = nullptr;
  QDoubleSpinBox* threshold_ = nullptr;
  QComboBox* dense_ = nullptr;
  QSlider* denseOpacity_ = nullptr;
};

}  // namespace sapiens::studio
