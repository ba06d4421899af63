#include "finetune_panel.h"

#include "label_canvas.h"
#include "loss_chart.h"
#include "task_set.h"

#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/export/keypoint_metadata.h"
#include "sapiens/export/seg_classes.h"
#include "sapiens/finetune/frame_labels.h"

#include <opencv2/core.hpp>

#include <QAction>
#include <QActionGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMetaObject>
#include <QPainter>
#include <QPixmap>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <cmath>
#include <exception>
#include <filesystem>
#include <functional>
#include <utility>

namespace sapiens::studio {

namespace {

constexpr int kDefaultAutosaveMs = 2000;

std::string utf8(const QString& text) {
  return text.toStdString();
}

QString qs(const std::string& text) {
  return QString::fromStdString(text);
}

QString duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  return s >= 3600 ? QStringLiteral("%1h%2m").arg(s / 3600).arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
                   : QStringLiteral("%1m%2s").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

// The keypoint groups of keypoints308.json ("groups": name -> indices); empty when it cannot be read.
std::map<QString, std::vector<int>> keypointGroups() {
  std::map<QString, std::vector<int>> groups;
  QFile file(qs(paths::resourceDir() + "/data/keypoints308.json"));
  if (!file.open(QIODevice::ReadOnly)) return groups;
  const QJsonObject object = QJsonDocument::fromJson(file.readAll()).object().value("groups").toObject();
  for (auto it = object.begin(); it != object.end(); ++it) {
    std::vector<int>& indices = groups[it.key()];
    for (const QJsonValue& value : it.value().toArray()) indices.push_back(value.toInt());
  }
  return groups;
}

// The filters offered, each a union of groups of the json.
const std::vector<std::pair<QString, QStringList>>& groupFilters() {
  static const std::vector<std::pair<QString, QStringList>> filters{
      {QStringLiteral("Body"), {QStringLiteral("body")}},
      {QStringLiteral("Feet"), {QStringLiteral("foot")}},
      {QStringLiteral("Hands"), {QStringLiteral("left_hand"), QStringLiteral("right_hand")}},
      {QStringLiteral("Face"), {QStringLiteral("face")}},
      {QStringLiteral("Extra"), {QStringLiteral("extra")}}};
  return filters;
}

std::vector<LabelClass> classesOf(const LabelSet& labels) {
  if (!labels.classes.empty()) return labels.classes;
  std::vector<LabelClass> classes;
  if (labels.task == Task::Seg) {
    for (std::size_t i = 0; i < seg29().size(); ++i)
      classes.push_back({seg29().names[i], seg29().palette[i], std::nullopt});
  } else if (labels.task == Task::Pose) {
    for (std::size_t i = 0; i < keypoints308().size(); ++i)
      classes.push_back({keypoints308().names[i], keypoints308().keypointColors[i], std::nullopt});
  }
  return classes;
}

// "HxW", multiples of 16.
std::optional<InputSize> parseInputSize(const QString& text) {
  static const QRegularExpression pattern(QStringLiteral("^\\s*(\\d+)\\s*[xX]\\s*(\\d+)\\s*$"));
  const QRegularExpressionMatch match = pattern.match(text);
  if (!match.hasMatch()) return std::nullopt;
  const int h = match.captured(1).toInt(), w = match.captured(2).toInt();
  if (h < 16 || w < 16 || h % 16 || w % 16) return std::nullopt;
  return InputSize{w, h};
}

}  // namespace

// A picture scaled to fit, whatever size the layout gives it.
class FineTunePanel::PreviewView : public QWidget {
 public:
  void setImage(const QImage& image) {
    image_ = image;
    update();
  }
  const QImage& image() const { return image_; }

 protected:
  void paintEvent(QPaintEvent*) override {
    if (image_.isNull()) return;
    QPainter painter(this);
    const QSize size = image_.size().scaled(this->size(), Qt::KeepAspectRatio);
    const QRect target(QPoint((width() - size.width()) / 2, (height() - size.height()) / 2), size);
    painter.setRenderHint(QPainter::SmoothPixmapTransform);
    painter.drawImage(target, image_);
  }

 private:
  QImage image_;
};

FineTunePanel::FineTunePanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("fineTunePanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("fineTuneTabs"));
  tabs_->addTab(createLabelTab(), tr("&Labels"));
  tabs_->addTab(createTrainTab(), tr("&Training"));
  layout->addWidget(tabs_, 1);
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("fineTuneMessage"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(message_);

  autosave_.setSingleShot(true);
  autosave_.setInterval(kDefaultAutosaveMs);
  connect(&autosave_, &QTimer::timeout, this, [this] { saveNow(); });
  connect(canvas_, &widgets::LabelCanvas::edited, this, &FineTunePanel::onEdited);
  connect(qApp, &QCoreApplication::aboutToQuit, this, [this] { saveNow(); });

  thread_.setObjectName(QStringLiteral("finetune"));
  worker_ = new FineTuneWorker;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  // Worker signals cross threads: queued, so these run on the GUI thread.
  connect(worker_, &FineTuneWorker::status, this, [this](const QString& text) { stats_->setText(text); });
  connect(worker_, &FineTuneWorker::preparing, this, [this](qulonglong done, qulonglong total) {
    progress_->setRange(0, int(total));
    progress_->setValue(int(done));
    stats_->setText(tr("Computing backbone features: %1 of %2 samples").arg(done).arg(total));
  });
  connect(worker_, &FineTuneWorker::trainingStarted, this,
          [this](const QString& metric, bool higherIsBetter, int totalSteps, int startStep) {
            metricName_ = metric;
            metricChart_->setTitle(
                tr("%1 (%2 is better)").arg(metric, higherIsBetter ? tr("higher") : tr("lower")));
            progress_->setRange(0, totalSteps);
            progress_->setValue(startStep);
            if (state_ != TrainingState::Paused) setState(TrainingState::Training);
          });
  connect(worker_, &FineTuneWorker::progress, this, &FineTunePanel::onProgress);
  connect(worker_, &FineTuneWorker::preview, this, [this](const QImage& image, int, const QString& caption) {
    preview_->setImage(image);
    previewCaption_->setText(tr("Prediction on the %1").arg(caption));
  });
  connect(worker_, &FineTuneWorker::pausedAt, this, [this](int step) {
    if (state_ == TrainingState::Paused) stats_->setText(tr("Paused at step %1").arg(step));
  });
  connect(worker_, &FineTuneWorker::finished, this, [this](bool stopped, int steps, const QString& summary) {
    stats_->setText(stopped ? tr("Stopped at step %1").arg(steps) : tr("Finished: %1 steps").arg(steps));
    showMessage(summary, false);
    setState(stopped ? TrainingState::Stopped : TrainingState::Finished);
  });
  connect(worker_, &FineTuneWorker::failed, this, [this](const QString& reason) {
    showMessage(tr("Fine-tuning failed: %1").arg(reason), true);
    setState(TrainingState::Failed);
  });
  connect(worker_, &FineTuneWorker::saved, this, [this](const QString& path, const QString& error) {
    if (error.isEmpty())
      showMessage(tr("Saved %1").arg(QDir::toNativeSeparators(path)), false);
    else
      showMessage(tr("Cannot save %1: %2").arg(QDir::toNativeSeparators(path), error), true);
    Q_EMIT modelSaved(path, error);
  });
  thread_.start(QThread::LowPriority);
  updateButtons();
}

FineTunePanel::~FineTunePanel() {
  saveNow();
  worker_->stop();
  thread_.quit();
  thread_.wait();
}

QWidget* FineTunePanel::createLabelTab() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(2, 2, 2, 2);

  auto* setRow = new QHBoxLayout;
  auto* newSet = new QPushButton(tr("New Set..."));
  newSet->setObjectName(QStringLiteral("fineTuneNewSet"));
  connect(newSet, &QPushButton::clicked, this, &FineTunePanel::chooseNewLabelSet);
  auto* openSet = new QPushButton(tr("Open Set..."));
  openSet->setObjectName(QStringLiteral("fineTuneOpenSet"));
  connect(openSet, &QPushButton::clicked, this, &FineTunePanel::chooseOpenLabelSet);
  auto* import = new QToolButton;
  import->setObjectName(QStringLiteral("fineTuneImport"));
  import->setText(tr("Import"));
  import->setPopupMode(QToolButton::InstantPopup);
  auto* importMenu = new QMenu(import);
  importMenu->addAction(tr("Official Seg Layout (images/ + masks/)..."), this,
                        &FineTunePanel::chooseImportSeg);
  importMenu->addAction(tr("COCO Keypoints..."), this, &FineTunePanel::chooseImportCoco);
  importMenu->addAction(tr("Dense Targets (pictures + .npy/.exr)..."), this,
                        &FineTunePanel::chooseImportDense);
  import->setMenu(importMenu);
  setRow->addWidget(newSet);
  setRow->addWidget(openSet);
  setRow->addWidget(import);
  setRow->addStretch(1);
  layout->addLayout(setRow);
  setLabel_ = new QLabel(tr("No label set"));
  setLabel_->setObjectName(QStringLiteral("fineTuneSetLabel"));
  setLabel_->setWordWrap(true);
  layout->addWidget(setLabel_);

  auto* addRow = new QHBoxLayout;
  addPicture_ = new QPushButton(tr("Add Picture on Display"));
  addPicture_->setObjectName(QStringLiteral("fineTuneAddPicture"));
  connect(addPicture_, &QPushButton::clicked, this,
          [this] { addCurrentPicture(fromPrediction_->isChecked()); });
  fromPrediction_ = new QCheckBox(tr("Start from prediction"));
  fromPrediction_->setObjectName(QStringLiteral("fineTuneFromPrediction"));
  fromPrediction_->setToolTip(tr("Start from the model's result on the picture instead of empty labels"));
  fromPrediction_->setChecked(true);
  addRow->addWidget(addPicture_);
  addRow->addWidget(fromPrediction_);
  addRow->addStretch(1);
  layout->addLayout(addRow);

  // Tools above the canvas.
  auto* toolbar = new QToolBar;
  toolbar->setObjectName(QStringLiteral("fineTuneTools"));
  toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  auto* toolGroup = new QActionGroup(this);
  const std::tuple<widgets::LabelCanvas::Tool, QString, QString, const char*> tools[] = {
      {widgets::LabelCanvas::Tool::Brush, QStringLiteral("actionLabelBrush"), tr("Brush"), "B"},
      {widgets::LabelCanvas::Tool::Eraser, QStringLiteral("actionLabelEraser"), tr("Eraser"), "E"},
      {widgets::LabelCanvas::Tool::Fill, QStringLiteral("actionLabelFill"), tr("Fill"), "G"},
      {widgets::LabelCanvas::Tool::Polygon, QStringLiteral("actionLabelPolygon"), tr("Polygon"), "P"}};
  canvas_ = new widgets::LabelCanvas;
  canvas_->setObjectName(QStringLiteral("labelCanvas"));
  for (const auto& [tool, name, text, key] : tools) {
    QAction* action = toolbar->addAction(text);
    action->setObjectName(name);
    action->setCheckable(true);
    action->setShortcut(QKeySequence(QString::fromLatin1(key)));
    action->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    action->setChecked(tool == canvas_->tool());
    toolGroup->addAction(action);
    addAction(action);
    connect(action, &QAction::triggered, this, [this, tool = tool] { canvas_->setTool(tool); });
  }
  toolbar->addSeparator();
  QAction* undo = canvas_->undoStack()->createUndoAction(this, tr("Undo"));
  undo->setObjectName(QStringLiteral("actionLabelUndo"));
  undo->setShortcut(QKeySequence::Undo);
  undo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  QAction* redo = canvas_->undoStack()->createRedoAction(this, tr("Redo"));
  redo->setObjectName(QStringLiteral("actionLabelRedo"));
  redo->setShortcut(QKeySequence::Redo);
  redo->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  toolbar->addAction(undo);
  toolbar->addAction(redo);
  addAction(undo);
  addAction(redo);
  layout->addWidget(toolbar);

  auto* splitter = new QSplitter(Qt::Horizontal);
  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(new QLabel(tr("Frames")));
  frames_ = new QListWidget;
  frames_->setObjectName(QStringLiteral("fineTuneFrames"));
  connect(frames_, &QListWidget::currentRowChanged, this, &FineTunePanel::selectFrame);
  sideLayout->addWidget(frames_, 1);

  toolPages_ = new QStackedWidget;
  // Page 0: nothing to edit.
  auto* none = new QLabel(tr("Open or create a label set."));
  none->setWordWrap(true);
  toolPages_->addWidget(none);
  // Page 1: seg.
  auto* segPage = new QWidget;
  auto* segLayout = new QFormLayout(segPage);
  segLayout->setContentsMargins(0, 0, 0, 0);
  brushSize_ = new QSpinBox;
  brushSize_->setObjectName(QStringLiteral("fineTuneBrushSize"));
  brushSize_->setRange(1, 200);
  brushSize_->setValue(canvas_->brushRadius());
  brushSize_->setSuffix(tr(" px"));
  connect(brushSize_, &QSpinBox::valueChanged, canvas_, &widgets::LabelCanvas::setBrushRadius);
  segLayout->addRow(tr("Brush radius"), brushSize_);
  opacity_ = new QSlider(Qt::Horizontal);
  opacity_->setRange(0, 100);
  opacity_->setValue(55);
  connect(opacity_, &QSlider::valueChanged, this, [this](int v) { canvas_->setOverlayOpacity(v / 100.0); });
  segLayout->addRow(tr("Opacity"), opacity_);
  classes_ = new QListWidget;
  classes_->setObjectName(QStringLiteral("fineTuneClasses"));
  classes_->setToolTip(tr("Select the class to paint; untick to hide it"));
  connect(classes_, &QListWidget::currentRowChanged, canvas_, &widgets::LabelCanvas::setCurrentClass);
  connect(classes_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    canvas_->setClassVisible(classes_->row(item), item->checkState() == Qt::Checked);
  });
  segLayout->addRow(classes_);
  toolPages_->addWidget(segPage);
  // Page 2: keypoints.
  auto* posePage = new QWidget;
  auto* poseLayout = new QFormLayout(posePage);
  poseLayout->setContentsMargins(0, 0, 0, 0);
  auto* groupRow = new QWidget;
  auto* groupLayout = new QVBoxLayout(groupRow);
  groupLayout->setContentsMargins(0, 0, 0, 0);
  for (const auto& [name, groups] : groupFilters()) {
    auto* box = new QCheckBox(name);
    box->setObjectName(QStringLiteral("fineTuneGroup") + name);
    box->setChecked(name == QLatin1String("Body"));
    connect(box, &QCheckBox::toggled, this, &FineTunePanel::applyKeypointFilter);
    groupBoxes_[name] = box;
    groupLayout->addWidget(box);
  }
  poseLayout->addRow(tr("Show"), groupRow);
  keypoint_ = new QComboBox;
  keypoint_->setObjectName(QStringLiteral("fineTuneKeypoint"));
  connect(keypoint_, &QComboBox::activated, this,
          [this](int row) { canvas_->setCurrentKeypoint(keypoint_->itemData(row).toInt()); });
  connect(canvas_, &widgets::LabelCanvas::currentKeypointChanged, this, [this](int index) {
    const int row = keypoint_->findData(index);
    if (row >= 0) keypoint_->setCurrentIndex(row);
  });
  poseLayout->addRow(tr("Keypoint"), keypoint_);
  person_ = new QComboBox;
  person_->setObjectName(QStringLiteral("fineTunePerson"));
  connect(person_, &QComboBox::activated, canvas_, &widgets::LabelCanvas::setCurrentPerson);
  auto refreshPeople = [this] {
    const int count = std::max<int>(1, int(canvas_->people().size()));
    person_->clear();
    for (int i = 0; i < count; ++i) person_->addItem(tr("Person %1").arg(i + 1));
    person_->setCurrentIndex(canvas_->currentPerson());
  };
  connect(canvas_, &widgets::LabelCanvas::peopleChanged, this, refreshPeople);
  connect(canvas_, &widgets::LabelCanvas::currentPersonChanged, this, refreshPeople);
  auto* addPerson = new QPushButton(tr("Add Person"));
  connect(addPerson, &QPushButton::clicked, canvas_, &widgets::LabelCanvas::addPerson);
  auto* personRow = new QHBoxLayout;
  personRow->addWidget(person_, 1);
  personRow->addWidget(addPerson);
  poseLayout->addRow(tr("Person"), personRow);
  placeHidden_ = new QCheckBox(tr("Place as hidden (occluded)"));
  connect(placeHidden_, &QCheckBox::toggled, this,
          [this](bool hidden) { canvas_->setPlaceVisibility(hidden ? 1 : 2); });
  poseLayout->addRow(placeHidden_);
  auto* poseHelp =
      new QLabel(tr("Click: place; drag: move; right click or Delete: remove; V: visible/hidden"));
  poseHelp->setWordWrap(true);
  poseLayout->addRow(poseHelp);
  toolPages_->addWidget(posePage);
  // Page 3: dense tasks.
  auto* dense =
      new QLabel(tr("Dense targets (normal, albedo, pointmap) are imported, not drawn: Import > Dense "
                    "Targets pairs each picture with an .npy or .exr of the same name."));
  dense->setWordWrap(true);
  toolPages_->addWidget(dense);
  sideLayout->addWidget(toolPages_, 2);

  splitter->addWidget(side);
  splitter->addWidget(canvas_);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({180, 480});
  layout->addWidget(splitter, 1);
  return page;
}

QWidget* FineTunePanel::createTrainTab() {
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  layout->setContentsMargins(2, 2, 2, 2);
  auto* form = new QFormLayout;
  auto* modelRow = new QHBoxLayout;
  baseModel_ = new QLineEdit;
  baseModel_->setObjectName(QStringLiteral("fineTuneBaseModel"));
  baseModel_->setPlaceholderText(tr("the loaded model of the set's task"));
  auto* browse = new QPushButton(tr("Browse..."));
  connect(browse, &QPushButton::clicked, this, &FineTunePanel::chooseBaseModel);
  modelRow->addWidget(baseModel_, 1);
  modelRow->addWidget(browse);
  form->addRow(tr("Start from"), modelRow);

  const TrainingSettings defaults;
  steps_ = new QSpinBox;
  steps_->setObjectName(QStringLiteral("fineTuneSteps"));
  steps_->setRange(1, 1000000);
  steps_->setValue(defaults.steps);
  batch_ = new QSpinBox;
  batch_->setObjectName(QStringLiteral("fineTuneBatch"));
  batch_->setRange(1, 256);
  batch_->setValue(defaults.batchSize);
  learningRate_ = new QDoubleSpinBox;
  learningRate_->setObjectName(QStringLiteral("fineTuneLearningRate"));
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
  inputSize_->setToolTip(tr("Network input HxW, multiples of 16"));
  evaluateEvery_ = new QSpinBox;
  evaluateEvery_->setObjectName(QStringLiteral("fineTuneEvaluateEvery"));
  evaluateEvery_->setRange(1, 100000);
  evaluateEvery_->setValue(defaults.evaluateEvery);
  snapshotEvery_ = new QSpinBox;
  snapshotEvery_->setObjectName(QStringLiteral("fineTuneSnapshotEvery"));
  snapshotEvery_->setRange(0, 1000000);
  snapshotEvery_->setSpecialValueText(tr("off"));
  snapshotEvery_->setToolTip(
      tr("Steps between versioned snapshots (head only) in the set's snapshots/ folder"));
  freshHead_ = new QCheckBox(tr("Fresh head"));
  flip_ = new QCheckBox(tr("Flip variants"));
  flip_->setChecked(defaults.horizontalFlip);
  auto* grid = new QHBoxLayout;
  grid->addWidget(freshHead_);
  grid->addWidget(flip_);
  grid->addStretch(1);
  form->addRow(tr("Steps"), steps_);
  form->addRow(tr("Batch"), batch_);
  form->addRow(tr("Learning rate"), learningRate_);
  form->addRow(tr("Input size"), inputSize_);
  form->addRow(tr("Evaluate every"), evaluateEvery_);
  form->addRow(tr("Snapshot every"), snapshotEvery_);
  form->addRow(grid);
  layout->addLayout(form);

  auto* buttons = new QHBoxLayout;
  train_ = new QPushButton(tr("Train"));
  train_->setObjectName(QStringLiteral("fineTuneTrain"));
  connect(train_, &QPushButton::clicked, this, &FineTunePanel::startTraining);
  pause_ = new QPushButton(tr("Pause"));
  pause_->setObjectName(QStringLiteral("fineTunePause"));
  connect(pause_, &QPushButton::clicked, this, [this] {
    if (state_ == TrainingState::Paused)
      resumeTraining();
    else
      pauseTraining();
  });
  stop_ = new QPushButton(tr("Stop"));
  stop_->setObjectName(QStringLiteral("fineTuneStop"));
  connect(stop_, &QPushButton::clicked, this, &FineTunePanel::stopTraining);
  continue_ = new QPushButton(tr("Continue"));
  continue_->setObjectName(QStringLiteral("fineTuneContinue"));
  continue_->setToolTip(tr("Train the stopped head further"));
  connect(continue_, &QPushButton::clicked, this, &FineTunePanel::continueTraining);
  save_ = new QPushButton(tr("Save Model..."));
  save_->setObjectName(QStringLiteral("fineTuneSave"));
  connect(save_, &QPushButton::clicked, this, &FineTunePanel::chooseSaveModel);
  fullModel_ = new QCheckBox(tr("Full model"));
  fullModel_->setToolTip(tr("The backbone too; otherwise the head alone (loaded over its base checkpoint)"));
  for (QWidget* w : std::initializer_list<QWidget*>{train_, pause_, stop_, continue_, save_, fullModel_})
    buttons->addWidget(w);
  buttons->addStretch(1);
  layout->addLayout(buttons);

  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("fineTuneProgress"));
  progress_->setRange(0, 1);
  progress_->setValue(0);
  layout->addWidget(progress_);
  stats_ = new QLabel;
  stats_->setObjectName(QStringLiteral("fineTuneStats"));
  layout->addWidget(stats_);

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
  auto* previewBox = new QWidget;
  auto* previewLayout = new QVBoxLayout(previewBox);
  previewLayout->setContentsMargins(0, 0, 0, 0);
  preview_ = new PreviewView;
  preview_->setObjectName(QStringLiteral("fineTunePreview"));
  preview_->setMinimumSize(160, 120);
  previewCaption_ = new QLabel(tr("The prediction on a held-out frame appears here during training"));
  previewCaption_->setWordWrap(true);
  previewLayout->addWidget(preview_, 1);
  previewLayout->addWidget(previewCaption_);
  charts->addWidget(lossChart_);
  charts->addWidget(metricChart_);
  charts->addWidget(previewBox);
  layout->addWidget(charts, 1);
  return page;
}

void FineTunePanel::showMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? QStringLiteral("color: #d9534f;") : QString());
  if (error)
    logger().warn("Fine-tuning panel: {}", utf8(text));
  else
    logger().info("Fine-tuning panel: {}", utf8(text));
  Q_EMIT messageShown(text, error);
}

QImage FineTunePanel::previewImage() const {
  return preview_->image();
}

QString FineTunePanel::message() const {
  return message_->text();
}

void FineTunePanel::setCurrentPicture(const QString& path, const cv::Mat& bgr) {
  if (path != picturePath_) result_.reset();
  picturePath_ = path;
  picture_ = bgr;
  updateButtons();
}

void FineTunePanel::setCurrentResult(const FrameResult* result) {
  if (result)
    result_ = *result;
  else
    result_.reset();
}

void FineTunePanel::setModelLookup(std::function<QString(Task)> lookup) {
  modelLookup_ = std::move(lookup);
}

void FineTunePanel::setAutosaveDelay(int milliseconds) {
  autosave_.setInterval(milliseconds);
}

// Label sets

bool FineTunePanel::createLabelSet(const QString& folder, Task task) {
  if (task == Task::Backbone) {
    showMessage(tr("A label set needs a task with a head (seg, pose, normal, albedo, pointmap)"), true);
    return false;
  }
  try {
    if (QFileInfo::exists(QDir(folder).filePath(QString::fromLatin1(kLabelSetManifest))))
      return openLabelSetFolder(folder);
    LabelSet labels;
    labels.folder = utf8(folder);
    labels.task = task;
    saveLabelSet(labels);
    setLabelSet(std::move(labels));
    showMessage(tr("Created a %1 label set in %2").arg(taskLabel(task), QDir::toNativeSeparators(folder)),
                false);
    return true;
  } catch (const std::exception& e) {
    showMessage(tr("Cannot create the label set: %1").arg(qs(e.what())), true);
    return false;
  }
}

bool FineTunePanel::openLabelSetFolder(const QString& folder) {
  try {
    setLabelSet(openLabelSet(utf8(folder)));
    showMessage(tr("Opened %1 (%2 frames)").arg(QDir::toNativeSeparators(folder)).arg(labels_->frames.size()),
                false);
    return true;
  } catch (const std::exception& e) {
    showMessage(tr("Cannot open the label set: %1").arg(qs(e.what())), true);
    return false;
  }
}

bool FineTunePanel::importOfficialSegLayout(const QString& source, const QString& destination) {
  return importLabels(tr("the seg layout"), destination,
                      [&] { return sapiens::importOfficialSegLayout(utf8(source), utf8(destination)); });
}

bool FineTunePanel::importCocoKeypoints(const QString& cocoPath, const QString& imageFolder,
                                        const QString& destination) {
  return importLabels(tr("the COCO keypoints"), destination, [&] {
    return sapiens::importCocoKeypoints(utf8(cocoPath), utf8(imageFolder), utf8(destination));
  });
}

bool FineTunePanel::importDenseTargets(Task task, const QString& imageFolder, const QString& targetFolder,
                                       const QString& destination) {
  return importLabels(
      tr("the %1 targets").arg(QString::fromUtf8(taskName(task).data(), qsizetype(taskName(task).size()))),
      destination, [&] {
        return sapiens::importDenseTargets(task, utf8(imageFolder), utf8(targetFolder), utf8(destination));
      });
}

bool FineTunePanel::importLabels(const QString& what, const QString& destination,
                                 const std::function<LabelSet()>& import) {
  try {
    setLabelSet(import());
    showMessage(tr("Imported %1 frames into %2")
                    .arg(labels_->frames.size())
                    .arg(QDir::toNativeSeparators(destination)),
                false);
    return true;
  } catch (const std::exception& e) {
    showMessage(tr("Cannot import %1: %2").arg(what, qs(e.what())), true);
    return false;
  }
}

void FineTunePanel::setLabelSet(LabelSet labels) {
  saveNow();
  frame_ = -1;
  dirty_ = false;
  labels_ = std::move(labels);
  canvas_->clearFrame();
  const Task task = labels_->task;
  setLabel_->setText(
      tr("%1 label set: %2").arg(taskLabel(task), QDir::toNativeSeparators(qs(labels_->folder))));
  toolPages_->setCurrentIndex(task == Task::Seg ? 1 : task == Task::Pose ? 2 : 3);
  refreshClassList();
  refreshKeypointTools();
  if (chosenModels_.count(task))
    baseModel_->setText(chosenModels_.at(task));
  else
    baseModel_->setText(baseModelFor(task));
  refreshFrameList();
  if (!labels_->frames.empty()) frames_->setCurrentRow(0);
  if (state_ == TrainingState::Stopped || state_ == TrainingState::Finished ||
      state_ == TrainingState::Failed) {
    // The head trained on the previous set is not continued on this one (a running one carries on).
    FineTuneWorker* worker = worker_;
    QMetaObject::invokeMethod(
        worker, [worker] { worker->discard(); }, Qt::QueuedConnection);
    setState(TrainingState::Idle);
  }
  updateButtons();
  Q_EMIT labelSetChanged(qs(labels_->folder));
}

void FineTunePanel::refreshFrameList() {
  const QSignalBlocker block(frames_);
  frames_->clear();
  if (!labels_) return;
  for (const LabelledFrame& frame : labels_->frames) {
    QString text = QFileInfo(qs(frame.image)).completeBaseName();
    if (frame.split != FrameSplit::Auto)
      text += QStringLiteral(" (%1)").arg(qs(std::string(frameSplitName(frame.split))));
    frames_->addItem(text);
  }
  frames_->setCurrentRow(frame_);
}

void FineTunePanel::refreshClassList() {
  const QSignalBlocker block(classes_);
  classes_->clear();
  if (!labels_ || labels_->task != Task::Seg) return;
  for (const LabelClass& c : classesOf(*labels_)) {
    QPixmap swatch(12, 12);
    swatch.fill(QColor(c.color[0], c.color[1], c.color[2]));
    auto* item = new QListWidgetItem(QIcon(swatch), qs(c.name), classes_);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
    item->setCheckState(Qt::Checked);
  }
  classes_->setCurrentRow(std::min(1, classes_->count() - 1));
  canvas_->setCurrentClass(classes_->currentRow());
}

void FineTunePanel::refreshKeypointTools() {
  keypoint_->clear();
  if (!labels_ || labels_->task != Task::Pose) return;
  const std::vector<LabelClass> names = classesOf(*labels_);
  const bool standard = names.size() == keypoints308().size();
  for (const auto& [name, box] : groupBoxes_) box->setEnabled(standard);
  for (std::size_t i = 0; i < names.size(); ++i) keypoint_->addItem(qs(names[i].name), int(i));
}

void FineTunePanel::applyKeypointFilter() {
  if (!labels_ || labels_->task != Task::Pose) return;
  const std::size_t count = classesOf(*labels_).size();
  if (count != keypoints308().size()) {
    canvas_->setKeypointFilter({});
    return;
  }
  static const std::map<QString, std::vector<int>> groups = keypointGroups();
  std::vector<bool> shown(count, false);
  for (const auto& [name, members] : groupFilters()) {
    if (!groupBoxes_.at(name)->isChecked()) continue;
    for (const QString& group : members) {
      const auto it = groups.find(group);
      if (it == groups.end()) continue;
      for (int i : it->second)
        if (i >= 0 && i < int(count)) shown[i] = true;
    }
  }
  canvas_->setKeypointFilter(shown);
  // The keypoint list offers the shown ones.
  const QSignalBlocker block(keypoint_);
  keypoint_->clear();
  const std::vector<LabelClass> names = classesOf(*labels_);
  for (std::size_t i = 0; i < count; ++i)
    if (shown[i]) keypoint_->addItem(qs(names[i].name), int(i));
  const int row = keypoint_->findData(canvas_->currentKeypoint());
  if (row >= 0) keypoint_->setCurrentIndex(row);
}

QString FineTunePanel::frameNameFor(const QString& path) const {
  // A video or camera frame is "source#frameN".
  QString stem = QFileInfo(path.section(QLatin1Char('#'), 0, 0)).completeBaseName();
  if (path.contains(QLatin1Char('#'))) stem += QLatin1Char('_') + path.section(QLatin1Char('#'), 1);
  stem.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]")), QStringLiteral("_"));
  if (stem.isEmpty()) stem = QStringLiteral("frame");
  auto taken = [this](const QString& name) {
    for (const LabelledFrame& f : labels_->frames)
      if (QFileInfo(qs(f.image)).completeBaseName() == name) return true;
    return QFileInfo::exists(QDir(qs(labels_->folder)).filePath(QStringLiteral("images/") + name + ".png"));
  };
  QString name = stem;
  for (int n = 2; taken(name); ++n) name = QStringLiteral("%1_%2").arg(stem).arg(n);
  return name;
}

bool FineTunePanel::addCurrentPicture(bool fromPrediction) {
  if (!labels_) {
    showMessage(tr("Create or open a label set first"), true);
    return false;
  }
  if (picture_.empty()) {
    showMessage(tr("No picture on display to add"), true);
    return false;
  }
  const Task task = labels_->task;
  const std::size_t count = labelCount(*labels_);
  FrameLabels frame;
  frame.image = picture_;
  QString note;
  const bool havePrediction = fromPrediction && result_ && result_->width == picture_.cols &&
                              result_->height == picture_.rows && result_->has(task);
  if (fromPrediction && !havePrediction)
    note = tr(" (no %1 result for this picture: starting from empty labels)").arg(taskLabel(task));
  switch (task) {
    case Task::Seg:
      frame.mask = cv::Mat(picture_.size(), CV_8UC1, cv::Scalar(kIgnoreLabel));
      if (havePrediction) {
        double maxLabel = 0;
        cv::minMaxLoc(result_->segLabels, nullptr, &maxLabel);
        if (maxLabel < double(count))
          frame.mask = result_->segLabels.clone();
        else
          note = tr(" (the prediction's classes do not fit the set's: starting from empty labels)");
      }
      break;
    case Task::Pose:
      if (havePrediction && count == keypoints308().size()) {
        for (const PoseInstance& pose : result_->poses) {
          PersonLabel person;
          person.bbox = pose.bbox;
          person.keypoints.assign(count, KeypointLabel{});
          for (std::size_t k = 0; k < std::min(count, pose.keypoints.size()); ++k) {
            const bool confident = k < pose.scores.size() && pose.scores[k] >= 0.3f;
            if (confident) person.keypoints[k] = {pose.keypoints[k][0], pose.keypoints[k][1], 2};
          }
          frame.people.push_back(std::move(person));
        }
      }
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
      if (!havePrediction) {
        showMessage(tr("Dense targets are imported, not drawn: a %1 frame can only be added from the model's "
                       "result on the picture")
                        .arg(taskLabel(task)),
                    true);
        return false;
      }
      frame.target = (task == Task::Normal   ? result_->normal
                      : task == Task::Albedo ? result_->albedo
                                             : result_->pointmap)
                         .clone();
      break;
    case Task::Backbone:
      return false;
  }
  try {
    saveNow();
    const std::size_t index = addFrame(*labels_, utf8(frameNameFor(picturePath_)), frame);
    refreshFrameList();
    frames_->setCurrentRow(int(index));
    showMessage(tr("Added %1 as frame %2%3").arg(QFileInfo(picturePath_).fileName()).arg(index + 1).arg(note),
                false);
    updateButtons();
    return true;
  } catch (const std::exception& e) {
    showMessage(tr("Cannot add the picture: %1").arg(qs(e.what())), true);
    return false;
  }
}

void FineTunePanel::selectFrame(int index) {
  if (!labels_ || index == frame_) return;
  saveNow();
  if (index < 0 || index >= int(labels_->frames.size())) {
    frame_ = -1;
    canvas_->clearFrame();
    return;
  }
  try {
    const FrameLabels frame = readFrameLabels(*labels_, std::size_t(index));
    frame_ = index;
    dirty_ = false;
    switch (labels_->task) {
      case Task::Seg:
        canvas_->setSegFrame(frame.image, frame.mask, classesOf(*labels_));
        for (int i = 0; i < classes_->count(); ++i)
          canvas_->setClassVisible(i, classes_->item(i)->checkState() == Qt::Checked);
        break;
      case Task::Pose: {
        const std::vector<LabelClass> classes = classesOf(*labels_);
        std::vector<std::string> names;
        std::vector<Rgb> colors;
        for (const LabelClass& c : classes) names.push_back(c.name), colors.push_back(c.color);
        const bool standard = classes.size() == keypoints308().size();
        canvas_->setKeypointFrame(
            frame.image, frame.people, names, colors,
            standard ? keypoints308().skeletonLinks : std::vector<std::array<int, 2>>{});
        applyKeypointFilter();
        break;
      }
      default:
        canvas_->setReadOnlyFrame(frame.image);
    }
    if (frames_->currentRow() != index) {
      const QSignalBlocker block(frames_);
      frames_->setCurrentRow(index);
    }
  } catch (const std::exception& e) {
    frame_ = -1;
    canvas_->clearFrame();
    showMessage(tr("Cannot show frame %1: %2").arg(index + 1).arg(qs(e.what())), true);
  }
}

void FineTunePanel::onEdited() {
  dirty_ = true;
  autosave_.start();
}

bool FineTunePanel::saveNow() {
  autosave_.stop();
  if (!dirty_ || !labels_ || frame_ < 0 || frame_ >= int(labels_->frames.size())) return true;
  FrameLabels frame;
  frame.image = canvas_->image();
  if (labels_->task == Task::Seg) frame.mask = canvas_->mask();
  if (labels_->task == Task::Pose) frame.people = canvas_->people();
  if (labels_->task != Task::Seg && labels_->task != Task::Pose) return true;
  try {
    writeFrameLabels(*labels_, std::size_t(frame_), frame);
    dirty_ = false;
    Q_EMIT autosaved(frame_);
    return true;
  } catch (const std::exception& e) {
    showMessage(tr("Cannot save the labels of frame %1: %2").arg(frame_ + 1).arg(qs(e.what())), true);
    return false;
  }
}

// Training

QString FineTunePanel::baseModelFor(Task task) const {
  return modelLookup_ ? modelLookup_(task) : QString();
}

TrainingSettings FineTunePanel::trainingSettings() const {
  TrainingSettings settings;
  settings.steps = steps_->value();
  settings.batchSize = batch_->value();
  settings.learningRate = learningRate_->value();
  if (const auto size = parseInputSize(inputSize_->text())) settings.inputSize = *size;
  settings.evaluateEvery = evaluateEvery_->value();
  settings.snapshotEvery = snapshotEvery_->value();
  if (labels_ && settings.snapshotEvery > 0)
    settings.snapshotFolder = utf8(QDir(qs(labels_->folder)).filePath(QStringLiteral("snapshots")));
  settings.freshHead = freshHead_->isChecked();
  settings.horizontalFlip = flip_->isChecked();
  return settings;
}

void FineTunePanel::startTraining() {
  if (state_ == TrainingState::Preparing || state_ == TrainingState::Training ||
      state_ == TrainingState::Paused || state_ == TrainingState::Stopping)
    return;
  if (!labels_) return showMessage(tr("Create or open a label set first"), true);
  if (labels_->frames.empty()) return showMessage(tr("The label set has no frames yet"), true);
  if (!parseInputSize(inputSize_->text()))
    return showMessage(tr("Input size '%1' is not HxW in multiples of 16").arg(inputSize_->text()), true);
  QString model = baseModel_->text().trimmed();
  if (model.isEmpty()) model = baseModelFor(labels_->task);
  if (model.isEmpty())
    return showMessage(tr("Choose the %1 checkpoint to start from").arg(taskLabel(labels_->task)), true);
  if (!saveNow()) return;  // training reads the frames from disk
  FineTuneJob job{qs(labels_->folder), model, trainingSettings()};
  chosenModels_[labels_->task] = model;
  lossChart_->clearPoints();
  metricChart_->clearPoints();
  preview_->setImage({});
  progress_->setValue(0);
  setState(TrainingState::Preparing);
  showMessage(tr("Training the %1 head from %2").arg(taskLabel(labels_->task), QFileInfo(model).fileName()),
              false);
  FineTuneWorker* worker = worker_;
  worker->rearm();
  QMetaObject::invokeMethod(
      worker, [worker, job] { worker->train(job); }, Qt::QueuedConnection);
}

void FineTunePanel::pauseTraining() {
  if (state_ != TrainingState::Training && state_ != TrainingState::Preparing) return;
  worker_->pause();
  setState(TrainingState::Paused);
  stats_->setText(tr("Pausing after the current step..."));
}

void FineTunePanel::resumeTraining() {
  if (state_ != TrainingState::Paused) return;
  worker_->resume();
  setState(TrainingState::Training);
}

void FineTunePanel::stopTraining() {
  if (state_ != TrainingState::Training && state_ != TrainingState::Preparing &&
      state_ != TrainingState::Paused)
    return;
  worker_->stop();
  setState(TrainingState::Stopping);
  stats_->setText(tr("Stopping after the current step..."));
}

void FineTunePanel::continueTraining() {
  if (state_ != TrainingState::Stopped) return;
  FineTuneWorker* worker = worker_;
  worker->rearm();
  setState(TrainingState::Training);
  QMetaObject::invokeMethod(
      worker, [worker] { worker->continueTraining(); }, Qt::QueuedConnection);
}

void FineTunePanel::saveModel(const QString& path, bool fullModel) {
  worker_->requestSave(path, fullModel);
}

void FineTunePanel::onProgress(int step, int totalSteps, double trainLoss, double learningRate,
                               double stepsPerSecond, double secondsLeft, bool evaluated, double evalLoss,
                               double evalMetric, bool onValidation, const QString& snapshot) {
  progress_->setRange(0, totalSteps);
  progress_->setValue(step);
  lossChart_->addPoint(trainSeries_, step, trainLoss);
  if (evaluated) {
    lossChart_->setSeriesName(evalSeries_, onValidation ? tr("validation") : tr("eval (training frames)"));
    lossChart_->addPoint(evalSeries_, step, evalLoss);
    metricChart_->addPoint(metricSeries_, step, evalMetric);
  }
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
  if (!snapshot.isEmpty()) showMessage(tr("Snapshot %1").arg(QDir::toNativeSeparators(snapshot)), false);
}

void FineTunePanel::setState(TrainingState state) {
  state_ = state;
  pause_->setText(state == TrainingState::Paused ? tr("Resume") : tr("Pause"));
  updateButtons();
  Q_EMIT trainingStateChanged(state);
}

void FineTunePanel::updateButtons() {
  const bool running = state_ == TrainingState::Preparing || state_ == TrainingState::Training ||
                       state_ == TrainingState::Paused || state_ == TrainingState::Stopping;
  train_->setEnabled(!running && labels_ && !labels_->frames.empty());
  pause_->setEnabled(state_ == TrainingState::Preparing || state_ == TrainingState::Training ||
                     state_ == TrainingState::Paused);
  stop_->setEnabled(pause_->isEnabled());
  continue_->setEnabled(state_ == TrainingState::Stopped);
  save_->setEnabled(state_ == TrainingState::Training || state_ == TrainingState::Paused ||
                    state_ == TrainingState::Stopped || state_ == TrainingState::Finished);
  addPicture_->setEnabled(labels_.has_value() && !picture_.empty());
}

// Dialogs

void FineTunePanel::chooseNewLabelSet() {
  QStringList tasks;
  for (Task task : {Task::Seg, Task::Pose, Task::Normal, Task::Albedo, Task::Pointmap})
    tasks << taskLabel(task);
  bool ok = false;
  const QString chosen = QInputDialog::getItem(this, tr("New Label Set"), tr("Task"), tasks, 0, false, &ok);
  if (!ok) return;
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (folder.isEmpty()) return;
  if (const auto task = parseTask(utf8(chosen))) createLabelSet(folder, *task);
}

void FineTunePanel::chooseOpenLabelSet() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Label Set"));
  if (!folder.isEmpty()) openLabelSetFolder(folder);
}

void FineTunePanel::chooseImportSeg() {
  const QString source =
      QFileDialog::getExistingDirectory(this, tr("Official Seg Layout (a folder with images/ and masks/)"));
  if (source.isEmpty()) return;
  const QString destination = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (!destination.isEmpty()) importOfficialSegLayout(source, destination);
}

void FineTunePanel::chooseImportCoco() {
  const QString coco =
      QFileDialog::getOpenFileName(this, tr("COCO Keypoints File"), {}, tr("JSON (*.json);;All files (*)"));
  if (coco.isEmpty()) return;
  const QString images = QFileDialog::getExistingDirectory(this, tr("Folder of the COCO File's Images"),
                                                           QFileInfo(coco).absolutePath());
  if (images.isEmpty()) return;
  const QString destination = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (!destination.isEmpty()) importCocoKeypoints(coco, images, destination);
}

void FineTunePanel::chooseImportDense() {
  bool chosen = false;
  const QString task = QInputDialog::getItem(
      this, tr("Import Dense Targets"), tr("Targets for:"),
      {QStringLiteral("normal"), QStringLiteral("albedo"), QStringLiteral("pointmap")}, 0, false, &chosen);
  if (!chosen) return;
  const QString images = QFileDialog::getExistingDirectory(this, tr("Folder of the Pictures"));
  if (images.isEmpty()) return;
  const QString targets = QFileDialog::getExistingDirectory(
      this, tr("Folder of the Targets (.npy or .exr, one per picture, same name)"), images);
  if (targets.isEmpty()) return;
  const QString destination = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (!destination.isEmpty()) importDenseTargets(*parseTask(utf8(task)), images, targets, destination);
}

void FineTunePanel::chooseBaseModel() {
  const QString path = QFileDialog::getOpenFileName(this, tr("Checkpoint to Start From"), baseModel_->text(),
                                                    tr("Safetensors (*.safetensors);;All files (*)"));
  if (path.isEmpty()) return;
  baseModel_->setText(path);
  if (labels_) chosenModels_[labels_->task] = path;
}

void FineTunePanel::chooseSaveModel() {
  QString suggestion;
  if (labels_) {
    suggestion = QDir(qs(labels_->folder))
                     .filePath(QStringLiteral("finetuned-%1-step%2.safetensors")
                                   .arg(taskLabel(labels_->task))
                                   .arg(progress_->value()));
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Save Fine-tuned Model"), suggestion,
                                                    tr("Safetensors (*.safetensors)"));
  if (!path.isEmpty()) saveModel(path, fullModel_->isChecked());
}

}  // namespace sapiens::studio
