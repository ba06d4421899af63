#include "tasks_panel.h"

#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QListWidget>
#include <QPixmap>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

namespace sapiens::studio {
namespace {

QSlider* percentSlider(const QString& name, const QString& accessibleName, int value) {
  auto* slider = new QSlider(Qt::Horizontal);
  slider->setObjectName(name);
  slider->setAccessibleName(accessibleName);
  slider->setRange(0, 100);
  slider->setValue(value);
  return slider;
}

QIcon swatch(const Rgb& rgb) {
  QPixmap pixmap(12, 12);
  pixmap.fill(QColor(rgb[0], rgb[1], rgb[2]));
  return QIcon(pixmap);
}

}  // namespace

TasksPanel::TasksPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("tasksPanel"));
  auto* layout = new QVBoxLayout(this);

  auto* tasks = new QGroupBox(tr("Tasks"));
  auto* tasksLayout = new QVBoxLayout(tasks);
  for (Task task : headTasksInRunOrder()) {
    auto* check = new QCheckBox(taskLabel(task));
    check->setObjectName(QStringLiteral("taskCheck_") + taskLabel(task));
    check->setChecked(task == Task::Seg || task == Task::Pose);
    connect(check, &QCheckBox::toggled, this, &TasksPanel::tasksChanged);
    tasksLayout->addWidget(check);
    taskChecks_[task] = check;
  }
  runOnOpen_ = new QCheckBox(tr("Run automatically on open"));
  runOnOpen_->setObjectName(QStringLiteral("runOnOpenCheck"));
  tasksLayout->addWidget(runOnOpen_);
  run_ = new QPushButton(tr("Run"));
  run_->setObjectName(QStringLiteral("runButton"));
  run_->setToolTip(tr("Run the checked tasks on the current image (Ctrl+R)"));
  connect(run_, &QPushButton::clicked, this, &TasksPanel::runRequested);
  tasksLayout->addWidget(run_);
  layout->addWidget(tasks);

  auto* layers = new QGroupBox(tr("Layers"));
  auto* form = new QFormLayout(layers);
  mask_ = new QCheckBox(tr("Part mask"));
  mask_->setObjectName(QStringLiteral("maskLayerCheck"));
  mask_->setChecked(true);
  maskOpacity_ = percentSlider(QStringLiteral("maskOpacitySlider"), tr("Part mask opacity"), 50);
  form->addRow(mask_, maskOpacity_);
  classes_ = new QListWidget;
  classes_->setObjectName(QStringLiteral("classList"));
  classes_->setAccessibleName(tr("Body parts shown"));
  const SegClasses& seg = seg29();
  for (std::size_t i = 0; i < seg.size(); ++i) {
    auto* item = new QListWidgetItem(swatch(seg.palette[i]), QString::fromStdString(seg.names[i]), classes_);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(i == 0 ? Qt::Unchecked : Qt::Checked);  // background stays uncovered
  }
  classes_->setMaximumHeight(140);
  form->addRow(classes_);

  keypoints_ = new QCheckBox(tr("Keypoints"));
  keypoints_->setObjectName(QStringLiteral("keypointsLayerCheck"));
  keypoints_->setChecked(true);
  threshold_ = new QDoubleSpinBox;
  threshold_->setObjectName(QStringLiteral("keypointThresholdSpin"));
  threshold_->setAccessibleName(tr("Keypoint score threshold"));
  threshold_->setRange(0.0, 1.0);
  threshold_->setSingleStep(0.05);
  threshold_->setValue(kDefaultKeypointThreshold);
  threshold_->setPrefix(tr("score >= "));
  form->addRow(keypoints_, threshold_);
  boxes_ = new QCheckBox(tr("Person boxes"));
  boxes_->setObjectName(QStringLiteral("boxesLayerCheck"));
  boxes_->setChecked(true);
  form->addRow(boxes_);

  dense_ = new QComboBox;
  dense_->setObjectName(QStringLiteral("denseLayerCombo"));
  dense_->setAccessibleName(tr("Map layer"));
  dense_->addItem(tr("None"), int(DenseLayer::None));
  dense_->addItem(tr("Normals"), int(DenseLayer::Normal));
  dense_->addItem(tr("Albedo"), int(DenseLayer::Albedo));
  dense_->addItem(tr("Depth"), int(DenseLayer::Depth));
  dense_->addItem(tr("Alpha matte"), int(DenseLayer::Alpha));
  dense_->addItem(tr("Cut-out"), int(DenseLayer::Cutout));
  denseOpacity_ = percentSlider(QStringLiteral("denseOpacitySlider"), tr("Map layer opacity"), 70);
  form->addRow(dense_, denseOpacity_);
  layout->addWidget(layers);
  layout->addStretch(1);

  for (QCheckBox* box : {mask_, keypoints_, boxes_})
    connect(box, &QCheckBox::toggled, this, &TasksPanel::layersChanged);
  for (QSlider* slider : {maskOpacity_, denseOpacity_})
    connect(slider, &QSlider::valueChanged, this, &TasksPanel::layersChanged);
  connect(classes_, &QListWidget::itemChanged, this, &TasksPanel::layersChanged);
  connect(threshold_, &QDoubleSpinBox::valueChanged, this, &TasksPanel::layersChanged);
  connect(dense_, &QComboBox::currentIndexChanged, this, &TasksPanel::layersChanged);
}

TaskSet TasksPanel::selectedTasks() const {
  TaskSet set = 0;
  for (const auto& [task, check] : taskChecks_) {
    if (check->isChecked()) set |= taskBit(task);
  }
  return set;
}

void TasksPanel::setTaskSelected(Task task, bool selected) {
  if (auto found = taskChecks_.find(task); found != taskChecks_.end()) found->second->setChecked(selected);
}

bool TasksPanel::runsOnOpen() const {
  return runOnOpen_->isChecked();
}

void TasksPanel::setRunsOnOpen(bool on) {
  runOnOpen_->setChecked(on);
}

bool TasksPanel::maskVisible() const {
  return mask_->isChecked();
}

double TasksPanel::maskOpacity() const {
  return maskOpacity_->value() / 100.0;
}

std::vector<QColor> TasksPanel::maskPalette() const {
  const SegClasses& seg = seg29();
  std::vector<QColor> palette;
  for (std::size_t i = 0; i < seg.size(); ++i) {
    const bool shown = classes_->item(int(i))->checkState() == Qt::Checked;
    palette.emplace_back(seg.palette[i][0], seg.palette[i][1], seg.palette[i][2], shown ? 255 : 0);
  }
  return palette;
}

void TasksPanel::setClassVisible(int classIndex, bool visible) {
  if (QListWidgetItem* item = classes_->item(classIndex))
    item->setCheckState(visible ? Qt::Checked : Qt::Unchecked);
}

bool TasksPanel::keypointsVisible() const {
  return keypoints_->isChecked();
}

bool TasksPanel::boxesVisible() const {
  return boxes_->isChecked();
}

double TasksPanel::keypointThreshold() const {
  return threshold_->value();
}

void TasksPanel::setKeypointThreshold(double threshold) {
  threshold_->setValue(threshold);
}

DenseLayer TasksPanel::denseLayer() const {
  return DenseLayer(dense_->currentData().toInt());
}

void TasksPanel::setDenseLayer(DenseLayer layer) {
  dense_->setCurrentIndex(dense_->findData(int(layer)));
}

double TasksPanel::denseOpacity() const {
  return denseOpacity_->value() / 100.0;
}

}  // namespace sapiens::studio
