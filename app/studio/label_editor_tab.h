#pragma once
// The Labels tab of the fine-tuning panel: the label set's buttons (new, open, import), "add the picture
// on display", the frame list, the labelling canvas with its tools (brush, eraser, fill, polygon, undo,
// redo; classes for seg, keypoint groups and people for pose) and the autosave of the edits, a moment
// after the last one and whenever the frame changes. The label set itself belongs to FineTunePanel: the
// dialogs here end in requests (signals) that the panel carries out, and the tab edits the frames of the
// set the panel shows in it.

#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/model/task.h"

#include <QString>
#include <QTimer>
#include <QWidget>

#include <map>
#include <memory>
#include <set>

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSlider;
class QSpinBox;
class QStackedWidget;

namespace sapiens::widgets {
class LabelCanvas;
}

namespace sapiens::studio {

class SerialWorker;

class LabelEditorTab : public QWidget {
  Q_OBJECT

 public:
  explicit LabelEditorTab(QWidget* parent = nullptr);
  /// Writes what is pending first.
  ~LabelEditorTab() override;

  /// Shows `labels` (the panel's, kept alive and in place until another set or null replaces it; null:
  /// none) from its first frame. Pending edits of the frame shown before are dropped: saveNow() first. The
  /// tab touches no set after that; its owner lets go of it this way before the set goes.
  void setLabelSet(LabelSet* labels);
  /// The frame list again, after frames were added to the set.
  void refreshFrames();
  /// Shows frame `index` once it is read, off the GUI thread: frameShown follows, or messageShown when it
  /// cannot be read. The frame on show before is saved first.
  void selectFrame(int index);
  int currentFrame() const { return frame_; }
  /// Appends `frame` to the set as a new frame `name` and shows it at once; returns its index. Its
  /// picture, label file and the manifest are written off the GUI thread, in order with the set's other
  /// reads and writes: frameAdded follows once they are on disk, or messageShown with the cause and the
  /// frame is taken out of the set again.
  int addFrameInBackground(const std::string& name, const FrameLabels& frame);
  /// Writes the current frame's edited labels now if they changed since the last save (after any write
  /// of the autosave still under way). The autosave itself writes off the GUI thread.
  bool saveNow();
  void setAutosaveDelay(int milliseconds);
  /// Whether "Add Picture on Display" can be used (a set is open and a picture is on display).
  void setCanAddPicture(bool can);

  widgets::LabelCanvas* canvas() const { return canvas_; }

 Q_SIGNALS:
  /// The labels of frame `index` were written to disk.
  void autosaved(int index);
  /// A frame added by addFrameInBackground is on disk (picture, labels and manifest); `index` is its place
  /// in the set now (a frame added before it that failed has left). None when another set is on show.
  void frameAdded(int index);
  /// Frame `index` is on show in the canvas.
  void frameShown(int index);
  /// A problem or a note for the panel's message line.
  void messageShown(const QString& text, bool error);
  // What the dialogs ask of the panel.
  void createRequested(const QString& folder, sapiens::Task task);
  void openRequested(const QString& folder);
  void importSegRequested(const QString& source, const QString& destination);
  void importCocoRequested(const QString& cocoPath, const QString& imageFolder, const QString& destination);
  void importDenseRequested(sapiens::Task task, const QString& imageFolder, const QString& targetFolder,
                            const QString& destination);
  /// "Add Picture on Display": labels from the displayed result when `fromPrediction`.
  void addPictureRequested(bool fromPrediction);

 private:
  QWidget* createSetButtons();
  QWidget* createToolBar();
  QWidget* createSegTools();
  QWidget* createPoseTools();
  void refreshClassList();
  void refreshKeypointTools();
  void applyKeypointFilter();
  void onEdited();
  void showFrame(int index, const FrameLabels& frame);
  /// The frame on show as the canvas has it, ready to be written.
  FrameLabels editedFrame() const;
  void saveInBackground();
  /// Edits of the frame on show not written yet (seg and pose: the other tasks are not drawn).
  bool hasUnsavedEdits() const;
  void reportSaveFailure(int index, const QString& cause);
  void readFrame(int index);
  // The index of frame `image` in the set on show when that is the set in `folder`, else -1.
  int frameIndex(const std::string& folder, const std::string& image) const;
  // Takes out of the set on show the frame whose files could not be written (when it is still that set).
  void dropUnwrittenFrame(const std::string& folder, const std::string& image);
  // `labels` less the frames whose files could not be written; on labelFiles_'s thread only.
  LabelSet withoutUnwritten(LabelSet labels) const;
  void chooseNewLabelSet();
  void chooseOpenLabelSet();
  void chooseImportSeg();
  void chooseImportCoco();
  void chooseImportDense();

  LabelSet* labels_ = nullptr;
  int frame_ = -1;
  int requestedFrame_ = -1;   // being read for showing
  quint64 frameRequest_ = 0;  // the latest read asked for; earlier ones are not shown
  bool dirty_ = false;
  QTimer autosave_;
  std::unique_ptr<SerialWorker> labelFiles_;  // reads and writes of the set's files, in order
  std::set<std::string> unwrittenImages_;     // folder/image of frames whose files failed: labelFiles_ only

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
};

}  // namespace sapiens::studio
