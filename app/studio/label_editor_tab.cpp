#include "label_editor_tab.h"

#include "failure_dialog.h"
#include "label_canvas.h"
#include "serial_worker.h"
#include "task_set.h"

#include "sapiens/common/paths.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <QAction>
#include <QActionGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
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
#include <QListWidget>
#include <QMenu>
#include <QPixmap>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QToolBar>
#include <QToolButton>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>
#include <tuple>
#include <utility>
#include <vector>

namespace sapiens::studio {

namespace {

constexpr int kDefaultAutosaveMs = 2000;

QString qs(const std::string& text) {
  return QString::fromStdString(text);
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

// The set's classes, or the released model's (seg29, keypoints308) when it names none.
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

// The tool pages, in the stack's order.
enum ToolPage { kNoSetPage, kSegPage, kPosePage, kDensePage };

}  // namespace

LabelEditorTab::LabelEditorTab(QWidget* parent)
    : QWidget(parent), labelFiles_(std::make_unique<SerialWorker>()) {
  canvas_ = new widgets::LabelCanvas;
  canvas_->setObjectName(QStringLiteral("labelCanvas"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(createSetButtons());
  setLabel_ = new QLabel(tr("No label set"));
  setLabel_->setObjectName(QStringLiteral("fineTuneSetLabel"));
  setLabel_->setWordWrap(true);
  layout->addWidget(setLabel_);

  auto* addRow = new QHBoxLayout;
  addPicture_ = new QPushButton(tr("Add Picture on Display"));
  addPicture_->setObjectName(QStringLiteral("fineTuneAddPicture"));
  addPicture_->setEnabled(false);
  connect(addPicture_, &QPushButton::clicked, this,
          [this] { Q_EMIT addPictureRequested(fromPrediction_->isChecked()); });
  fromPrediction_ = new QCheckBox(tr("Start from prediction"));
  fromPrediction_->setObjectName(QStringLiteral("fineTuneFromPrediction"));
  fromPrediction_->setToolTip(tr("Start from the model's result on the picture instead of empty labels"));
  fromPrediction_->setChecked(true);
  addRow->addWidget(addPicture_);
  addRow->addWidget(fromPrediction_);
  addRow->addStretch(1);
  layout->addLayout(addRow);
  layout->addWidget(createToolBar());

  auto* splitter = new QSplitter(Qt::Horizontal);
  auto* side = new QWidget;
  auto* sideLayout = new QVBoxLayout(side);
  sideLayout->setContentsMargins(0, 0, 0, 0);
  sideLayout->addWidget(new QLabel(tr("Frames")));
  frames_ = new QListWidget;
  frames_->setObjectName(QStringLiteral("fineTuneFrames"));
  frames_->setAccessibleName(tr("Frames"));
  connect(frames_, &QListWidget::currentRowChanged, this, &LabelEditorTab::selectFrame);
  sideLayout->addWidget(frames_, 1);

  toolPages_ = new QStackedWidget;
  auto* none = new QLabel(tr("Open or create a label set."));
  none->setWordWrap(true);
  toolPages_->insertWidget(kNoSetPage, none);
  toolPages_->insertWidget(kSegPage, createSegTools());
  toolPages_->insertWidget(kPosePage, createPoseTools());
  auto* dense =
      new QLabel(tr("Dense targets (normal, albedo, pointmap) are imported, not drawn: Import > Dense "
                    "Targets pairs each picture with an .npy or .exr of the same name."));
  dense->setWordWrap(true);
  toolPages_->insertWidget(kDensePage, dense);
  sideLayout->addWidget(toolPages_, 2);

  splitter->addWidget(side);
  splitter->addWidget(canvas_);
  splitter->setStretchFactor(1, 1);
  splitter->setSizes({180, 480});
  layout->addWidget(splitter, 1);

  autosave_.setSingleShot(true);
  autosave_.setInterval(kDefaultAutosaveMs);
  connect(&autosave_, &QTimer::timeout, this, &LabelEditorTab::saveInBackground);
  connect(canvas_, &widgets::LabelCanvas::edited, this, &LabelEditorTab::onEdited);
  connect(qApp, &QCoreApplication::aboutToQuit, this, [this] { saveNow(); });
}

QWidget* LabelEditorTab::createSetButtons() {
  auto* box = new QWidget;
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);
  auto* newSet = new QPushButton(tr("New Set..."));
  newSet->setObjectName(QStringLiteral("fineTuneNewSet"));
  connect(newSet, &QPushButton::clicked, this, &LabelEditorTab::chooseNewLabelSet);
  auto* openSet = new QPushButton(tr("Open Set..."));
  openSet->setObjectName(QStringLiteral("fineTuneOpenSet"));
  connect(openSet, &QPushButton::clicked, this, &LabelEditorTab::chooseOpenLabelSet);
  auto* import = new QToolButton;
  import->setObjectName(QStringLiteral("fineTuneImport"));
  import->setText(tr("Import"));
  import->setPopupMode(QToolButton::InstantPopup);
  auto* importMenu = new QMenu(import);
  importMenu->addAction(tr("Official Seg Layout (images/ + masks/)..."), this,
                        &LabelEditorTab::chooseImportSeg);
  importMenu->addAction(tr("COCO Keypoints..."), this, &LabelEditorTab::chooseImportCoco);
  importMenu->addAction(tr("Dense Targets (pictures + .npy/.exr)..."), this,
                        &LabelEditorTab::chooseImportDense);
  import->setMenu(importMenu);
  row->addWidget(newSet);
  row->addWidget(openSet);
  row->addWidget(import);
  row->addStretch(1);
  return box;
}

QWidget* LabelEditorTab::createToolBar() {
  auto* toolbar = new QToolBar;
  toolbar->setObjectName(QStringLiteral("fineTuneTools"));
  toolbar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  auto* toolGroup = new QActionGroup(this);
  const std::tuple<widgets::LabelCanvas::Tool, QString, QString, const char*> tools[] = {
      {widgets::LabelCanvas::Tool::Brush, QStringLiteral("actionLabelBrush"), tr("Brush"), "B"},
      {widgets::LabelCanvas::Tool::Eraser, QStringLiteral("actionLabelEraser"), tr("Eraser"), "E"},
      {widgets::LabelCanvas::Tool::Fill, QStringLiteral("actionLabelFill"), tr("Fill"), "G"},
      {widgets::LabelCanvas::Tool::Polygon, QStringLiteral("actionLabelPolygon"), tr("Polygon"), "P"}};
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
  return toolbar;
}

QWidget* LabelEditorTab::createSegTools() {
  auto* page = new QWidget;
  auto* form = new QFormLayout(page);
  form->setContentsMargins(0, 0, 0, 0);
  brushSize_ = new QSpinBox;
  brushSize_->setObjectName(QStringLiteral("fineTuneBrushSize"));
  brushSize_->setAccessibleName(tr("Brush size"));
  brushSize_->setRange(1, 200);
  brushSize_->setValue(canvas_->brushRadius());
  brushSize_->setSuffix(tr(" px"));
  connect(brushSize_, &QSpinBox::valueChanged, canvas_, &widgets::LabelCanvas::setBrushRadius);
  form->addRow(tr("Brush radius"), brushSize_);
  opacity_ = new QSlider(Qt::Horizontal);
  opacity_->setObjectName(QStringLiteral("fineTuneOpacity"));
  opacity_->setAccessibleName(tr("Label opacity"));
  opacity_->setRange(0, 100);
  opacity_->setValue(55);
  connect(opacity_, &QSlider::valueChanged, this, [this](int v) { canvas_->setOverlayOpacity(v / 100.0); });
  form->addRow(tr("Opacity"), opacity_);
  classes_ = new QListWidget;
  classes_->setObjectName(QStringLiteral("fineTuneClasses"));
  classes_->setAccessibleName(tr("Classes"));
  classes_->setToolTip(tr("Select the class to paint; untick to hide it"));
  connect(classes_, &QListWidget::currentRowChanged, canvas_, &widgets::LabelCanvas::setCurrentClass);
  connect(classes_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    canvas_->setClassVisible(classes_->row(item), item->checkState() == Qt::Checked);
  });
  form->addRow(classes_);
  return page;
}

QWidget* LabelEditorTab::createPoseTools() {
  auto* page = new QWidget;
  auto* form = new QFormLayout(page);
  form->setContentsMargins(0, 0, 0, 0);
  auto* groupRow = new QWidget;
  auto* groupLayout = new QVBoxLayout(groupRow);
  groupLayout->setContentsMargins(0, 0, 0, 0);
  for (const auto& [name, groups] : groupFilters()) {
    auto* box = new QCheckBox(name);
    box->setObjectName(QStringLiteral("fineTuneGroup") + name);
    box->setChecked(name == QLatin1String("Body"));
    connect(box, &QCheckBox::toggled, this, &LabelEditorTab::applyKeypointFilter);
    groupBoxes_[name] = box;
    groupLayout->addWidget(box);
  }
  form->addRow(tr("Show"), groupRow);
  keypoint_ = new QComboBox;
  keypoint_->setObjectName(QStringLiteral("fineTuneKeypoint"));
  keypoint_->setAccessibleName(tr("Keypoint to place"));
  connect(keypoint_, &QComboBox::activated, this,
          [this](int row) { canvas_->setCurrentKeypoint(keypoint_->itemData(row).toInt()); });
  connect(canvas_, &widgets::LabelCanvas::currentKeypointChanged, this, [this](int index) {
    const int row = keypoint_->findData(index);
    if (row >= 0) keypoint_->setCurrentIndex(row);
  });
  form->addRow(tr("Keypoint"), keypoint_);
  person_ = new QComboBox;
  person_->setObjectName(QStringLiteral("fineTunePerson"));
  person_->setAccessibleName(tr("Person"));
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
  addPerson->setObjectName(QStringLiteral("fineTuneAddPerson"));
  connect(addPerson, &QPushButton::clicked, canvas_, &widgets::LabelCanvas::addPerson);
  auto* personRow = new QHBoxLayout;
  personRow->addWidget(person_, 1);
  personRow->addWidget(addPerson);
  form->addRow(tr("Person"), personRow);
  placeHidden_ = new QCheckBox(tr("Place as hidden (occluded)"));
  placeHidden_->setObjectName(QStringLiteral("fineTunePlaceHidden"));
  connect(placeHidden_, &QCheckBox::toggled, this,
          [this](bool hidden) { canvas_->setPlaceVisibility(hidden ? 1 : 2); });
  form->addRow(placeHidden_);
  auto* help = new QLabel(tr("Click: place; drag: move; right click or Delete: remove; V: visible/hidden"));
  help->setWordWrap(true);
  form->addRow(help);
  return page;
}

void LabelEditorTab::setLabelSet(LabelSet* labels) {
  autosave_.stop();
  labels_ = labels;
  frame_ = requestedFrame_ = -1;
  ++frameRequest_;  // a frame of the previous set still being read is not shown
  dirty_ = false;
  canvas_->clearFrame();
  if (!labels_) {
    setLabel_->setText(tr("No label set"));
    toolPages_->setCurrentIndex(kNoSetPage);
  } else {
    const Task task = labels_->task;
    setLabel_->setText(
        tr("%1 label set: %2").arg(taskLabel(task), QDir::toNativeSeparators(qs(labels_->folder))));
    toolPages_->setCurrentIndex(task == Task::Seg ? kSegPage : task == Task::Pose ? kPosePage : kDensePage);
  }
  refreshClassList();
  refreshKeypointTools();
  refreshFrames();
  if (labels_ && !labels_->frames.empty()) frames_->setCurrentRow(0);
}

void LabelEditorTab::refreshFrames() {
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

void LabelEditorTab::refreshClassList() {
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

void LabelEditorTab::refreshKeypointTools() {
  keypoint_->clear();
  if (!labels_ || labels_->task != Task::Pose) return;
  const std::vector<LabelClass> names = classesOf(*labels_);
  const bool standard = names.size() == keypoints308().size();
  for (const auto& [name, box] : groupBoxes_) box->setEnabled(standard);
  for (std::size_t i = 0; i < names.size(); ++i) keypoint_->addItem(qs(names[i].name), int(i));
}

void LabelEditorTab::applyKeypointFilter() {
  if (!labels_ || labels_->task != Task::Pose) return;
  const std::size_t count = classesOf(*labels_).size();
  if (count != keypoints308().size()) {
    canvas_->setKeypointFilter({});
    return;
  }
  const std::map<std::string, std::vector<int>>& groups = keypoints308().groups;
  std::vector<bool> shown(count, false);
  for (const auto& [name, members] : groupFilters()) {
    if (!groupBoxes_.at(name)->isChecked()) continue;
    for (const QString& group : members) {
      const auto it = groups.find(group.toStdString());
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

LabelEditorTab::~LabelEditorTab() {
  saveNow();
  labelFiles_.reset();  // its last jobs run and post nothing more: before this object goes
}

void LabelEditorTab::selectFrame(int index) {
  if (!labels_ || index == frame_ || index == requestedFrame_) return;
  // The frame on show is saved in order before the read, without waiting for writes under way (a frame
  // just added may still be encoding its picture).
  saveInBackground();
  if (index < 0 || index >= int(labels_->frames.size())) {
    frame_ = requestedFrame_ = -1;
    ++frameRequest_;
    canvas_->clearFrame();
    return;
  }
  readFrame(index);
}

// Reads frame `index` off the GUI thread (a large picture takes a while to decode), after any write still
// queued, and shows it unless another frame or set was asked for meanwhile.
void LabelEditorTab::readFrame(int index) {
  requestedFrame_ = index;
  const quint64 request = ++frameRequest_;
  labelFiles_->post([this, labels = *labels_, index, request] {
    FrameLabels frame;
    QString error;
    try {
      frame = readFrameLabels(labels, std::size_t(index));
    } catch (const std::exception& e) {
      error = qs(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, index, request, frame = std::move(frame), error] {
          if (request != frameRequest_) return;  // another frame or set was asked for meanwhile
          requestedFrame_ = -1;
          if (!error.isEmpty()) {
            frame_ = -1;
            canvas_->clearFrame();
            Q_EMIT messageShown(tr("Cannot show frame %1: %2").arg(index + 1).arg(error), true);
            return;
          }
          showFrame(index, frame);
        },
        Qt::QueuedConnection);
  });
}

int LabelEditorTab::addFrameInBackground(const std::string& name, const FrameLabels& frame) {
  if (!labels_) return -1;
  saveInBackground();  // the frame on show first, in order before the new frame's files
  labels_->frames.push_back(plannedFrame(*labels_, name));
  const int index = int(labels_->frames.size()) - 1;
  labelFiles_->post([this, labels = *labels_, frame] {
    const std::string folder = labels.folder, image = labels.frames.back().image;
    QString error;
    try {
      writeFrameFiles(labels, labels.frames.back(), frame);
      saveLabelSet(withoutUnwritten(labels));
    } catch (const std::exception& e) {
      unwrittenImages_.insert(folder + "/" + image);  // no later manifest of this thread lists it
      error = qs(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, folder, image, error] {
          if (!error.isEmpty()) {
            dropUnwrittenFrame(folder, image);
            return Q_EMIT messageShown(tr("Cannot add the picture: %1").arg(error), true);
          }
          // Its place now: a frame added before it whose files failed has left the set since.
          const int now = frameIndex(folder, image);
          if (now >= 0) Q_EMIT frameAdded(now);
        },
        Qt::QueuedConnection);
  });
  refreshFrames();
  requestedFrame_ = -1;
  ++frameRequest_;  // a read still under way is not shown over it
  showFrame(index, frame);
  return index;
}

int LabelEditorTab::frameIndex(const std::string& folder, const std::string& image) const {
  if (!labels_ || labels_->folder != folder) return -1;
  const auto& frames = labels_->frames;
  const auto found =
      std::find_if(frames.begin(), frames.end(), [&](const LabelledFrame& f) { return f.image == image; });
  return found == frames.end() ? -1 : int(found - frames.begin());
}

void LabelEditorTab::dropUnwrittenFrame(const std::string& folder, const std::string& image) {
  const int index = frameIndex(folder, image);
  if (index < 0) return;
  labels_->frames.erase(labels_->frames.begin() + index);
  if (frame_ == index) {
    frame_ = -1;
    dirty_ = false;
    canvas_->clearFrame();
  } else if (frame_ > index) {
    --frame_;
  }
  if (requestedFrame_ >= 0) {  // a read under way was asked for by the old numbering: ask again
    const int requested = requestedFrame_ > index ? requestedFrame_ - 1 : -1;
    requestedFrame_ = -1;
    ++frameRequest_;
    if (requested >= 0) readFrame(requested);
  }
  refreshFrames();
  // A save of the set between the failed write and now may have listed the frame: the manifest again.
  labelFiles_->post([this, labels = *labels_] {
    try {
      saveLabelSet(withoutUnwritten(labels));
    } catch (const std::exception& e) {
      QMetaObject::invokeMethod(
          this, [this, cause = qs(e.what())] { Q_EMIT messageShown(cause, true); }, Qt::QueuedConnection);
    }
  });
}

LabelSet LabelEditorTab::withoutUnwritten(LabelSet labels) const {
  auto& frames = labels.frames;
  const auto unwritten = [&](const LabelledFrame& f) {
    return unwrittenImages_.count(labels.folder + "/" + f.image) > 0;
  };
  frames.erase(std::remove_if(frames.begin(), frames.end(), unwritten), frames.end());
  return labels;
}

void LabelEditorTab::showFrame(int index, const FrameLabels& frame) {
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
      canvas_->setKeypointFrame(frame.image, frame.people, names, colors,
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
  Q_EMIT frameShown(index);
}

void LabelEditorTab::onEdited() {
  dirty_ = true;
  autosave_.start();
}

FrameLabels LabelEditorTab::editedFrame() const {
  FrameLabels frame;
  frame.image = canvas_->image();
  if (labels_->task == Task::Seg) frame.mask = canvas_->mask().clone();  // the canvas goes on editing its own
  if (labels_->task == Task::Pose) frame.people = canvas_->people();
  return frame;
}

bool LabelEditorTab::hasUnsavedEdits() const {
  return dirty_ && labels_ && frame_ >= 0 && frame_ < int(labels_->frames.size()) &&
         (labels_->task == Task::Seg || labels_->task == Task::Pose);
}

void LabelEditorTab::reportSaveFailure(int index, const QString& cause) {
  Q_EMIT messageShown(tr("Cannot save the labels of frame %1: %2").arg(index + 1).arg(cause), true);
  showFailure(this, tr("Cannot save the labels of frame %1").arg(index + 1),
              labels_ ? qs(labels_->folder) : QString(), cause);
}

bool LabelEditorTab::saveNow() {
  autosave_.stop();
  labelFiles_->drain();  // an autosave under way goes first: the file ends with the latest labels
  if (!hasUnsavedEdits()) return true;
  try {
    writeFrameLabels(*labels_, std::size_t(frame_), editedFrame());
    dirty_ = false;
    Q_EMIT autosaved(frame_);
    return true;
  } catch (const std::exception& e) {
    reportSaveFailure(frame_, qs(e.what()));
    return false;
  }
}

void LabelEditorTab::saveInBackground() {
  autosave_.stop();  // called before the timer fires (a frame left, a frame added): the save is now
  if (!hasUnsavedEdits()) return;
  const LabelledFrame& entry = labels_->frames[std::size_t(frame_)];
  // A frame's first label file also goes into the manifest, which the panel's set holds: written here.
  if ((labels_->task == Task::Seg ? entry.mask : entry.keypoints).empty()) {
    saveNow();
    return;
  }
  dirty_ = false;  // an edit from now on makes it dirty again, and is saved after this write
  labelFiles_->post([this, labels = *labels_, index = frame_, frame = editedFrame()]() mutable {
    QString error;
    try {
      writeFrameLabels(labels, std::size_t(index), frame);
    } catch (const std::exception& e) {
      error = qs(e.what());
    }
    QMetaObject::invokeMethod(
        this,
        [this, index, error] {
          if (error.isEmpty()) return Q_EMIT autosaved(index);
          if (index == frame_) dirty_ = true;  // still to be saved
          reportSaveFailure(index, error);
        },
        Qt::QueuedConnection);
  });
}

void LabelEditorTab::setAutosaveDelay(int milliseconds) {
  autosave_.setInterval(milliseconds);
}

void LabelEditorTab::setCanAddPicture(bool can) {
  addPicture_->setEnabled(can);
}

// Dialogs

void LabelEditorTab::chooseNewLabelSet() {
  QStringList tasks;
  for (Task task : headTasksInRunOrder()) tasks << taskLabel(task);
  bool ok = false;
  const QString chosen = QInputDialog::getItem(this, tr("New Label Set"), tr("Task"), tasks, 0, false, &ok);
  if (!ok) return;
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (folder.isEmpty()) return;
  if (const auto task = parseTask(chosen.toStdString())) Q_EMIT createRequested(folder, *task);
}

void LabelEditorTab::chooseOpenLabelSet() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Open Label Set"));
  if (!folder.isEmpty()) Q_EMIT openRequested(folder);
}

void LabelEditorTab::chooseImportSeg() {
  const QString source =
      QFileDialog::getExistingDirectory(this, tr("Official Seg Layout (a folder with images/ and masks/)"));
  if (source.isEmpty()) return;
  const QString destination = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (!destination.isEmpty()) Q_EMIT importSegRequested(source, destination);
}

void LabelEditorTab::chooseImportCoco() {
  const QString coco =
      QFileDialog::getOpenFileName(this, tr("COCO Keypoints File"), {}, tr("JSON (*.json);;All files (*)"));
  if (coco.isEmpty()) return;
  const QString images = QFileDialog::getExistingDirectory(this, tr("Folder of the COCO File's Images"),
                                                           QFileInfo(coco).absolutePath());
  if (images.isEmpty()) return;
  const QString destination = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (!destination.isEmpty()) Q_EMIT importCocoRequested(coco, images, destination);
}

void LabelEditorTab::chooseImportDense() {
  bool chosen = false;
  QStringList tasks;
  for (Task task : denseTargetTasks()) tasks << taskLabel(task);
  const QString task =
      QInputDialog::getItem(this, tr("Import Dense Targets"), tr("Targets for:"), tasks, 0, false, &chosen);
  if (!chosen) return;
  const QString images = QFileDialog::getExistingDirectory(this, tr("Folder of the Pictures"));
  if (images.isEmpty()) return;
  const QString targets = QFileDialog::getExistingDirectory(
      this, tr("Folder of the Targets (.npy or .exr, one per picture, same name)"), images);
  if (targets.isEmpty()) return;
  const QString destination = QFileDialog::getExistingDirectory(this, tr("Folder for the New Label Set"));
  if (!destination.isEmpty())
    Q_EMIT importDenseRequested(*parseTask(task.toStdString()), images, targets, destination);
}

}  // namespace sapiens::studio
