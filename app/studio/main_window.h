#pragma once
// The studio's main window: the image view in the centre, the Media, Models, Tasks & Layers, 3-D and
// Log docks, menus, status bar, drag and drop, and the settings that persist between runs. Task models
// run on the inference thread (InferenceSession); their results are drawn as layers over the image,
// read out under the cursor, shown in 3-D and exported from File > Export.

#include "image_loader.h"
#include "image_view.h"
#include "media_player.h"
#include "motion_recording.h"
#include "recent_files.h"
#include "result_export.h"
#include "task_set.h"
#include "tasks_panel.h"
#include "theme.h"

#include "sapiens/pipeline/person_box_file.h"
#include "sapiens/pipeline/video_tracks.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

class QAction;
class QActionGroup;
class QDockWidget;
class QLabel;
class QMenu;
class QToolBar;

namespace sapiens::widgets {
class LogPanel;
class PointCloudView;
class Timeline;
}  // namespace sapiens::widgets

namespace sapiens::studio {

class ComputeToolBar;
class InferenceSession;
class CompareModeMenu;
class ExportController;
class StatusReadouts;
class ThemeMenu;
class ModelController;
class PlaybackController;
class MediaBrowser;
class ModelBrowser;
class CloudOptionsBar;
class FineTunePanel;
class FirstRunBanner;
class MotionDock;
class ResultLayers;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens image files and folders (their images, not recursively) into the Media dock and shows the
  /// first image. Problems are reported in the status bar and the log, never as a modal dialog.
  void openPaths(const QStringList& paths);
  /// Decodes `path` in the background and shows it when ready; a video opens in the media player.
  void showFile(const QString& path);
  /// Opens a video file, a camera (/dev/videoN) or a test-pattern camera ("synthetic:WxH@FPS") in the
  /// media player: the timeline appears, cameras start at once. Failures are reported like a bad image's.
  void openMedia(const QString& pathOrDevice, const CameraOptions& camera = {});
  /// Closes the video or camera on display.
  void closeMedia();
  MediaPlayer* mediaPlayer() const { return player_; }
  /// The key results of the picture on display are cached and matched under: the image path, or the
  /// video or camera name with "#frame" and the frame index.
  QString currentKey() const { return currentKey_; }
  static QString frameKey(const QString& source, qint64 index);
  /// Writes the open video with the overlays of the checked tasks to `path` in the background (what
  /// File > Export > Annotated Video does once a file is chosen), with a progress dialog that cancels;
  /// videoExportFinished follows.
  void exportAnnotatedVideo(const QString& path);

  /// The image on display (empty before the first one).
  QString currentFile() const { return currentFile_; }
  widgets::ImageView* imageView() const { return view_; }
  widgets::LogPanel* logPanel() const { return logPanel_; }
  MediaBrowser* mediaBrowser() const { return media_; }
  ModelBrowser* modelBrowser() const { return models_; }
  TasksPanel* tasksPanel() const { return tasksPanel_; }
  widgets::PointCloudView* pointCloudView() const { return cloudView_; }
  InferenceSession* inference() const { return inference_; }
  ComputeToolBar* computeToolBar() const { return computeBar_; }
  FineTunePanel* fineTunePanel() const { return fineTunePanel_; }

  /// Loads `path` as the `task` model in the background (what Models > Load Checkpoint does once a
  /// file is chosen). Problems are reported in the status bar and the log (modelProblem).
  void loadCheckpoint(Task task, const QString& path);
  /// The untrained demo weights for tasks without a checkpoint, for this session (--demo-weights).
  void useDemoWeights();
  /// Models > Manage Models.
  void showModelManager();
  /// Runs the tasks checked in the Tasks & Layers dock on the image on display (Ctrl+R), pose in the
  /// person boxes the user drew for it, if any.
  void runTasks();
  /// Runs the models on `device` in `dtype` from now on (what the Compute toolbar does): the loaded
  /// models are loaded there again in the background. A device or precision not offered here is
  /// refused with a message in the status bar.
  void setCompute(const QString& device, const QString& dtype);
  /// The models' input size as a fraction of their native one (the Compute toolbar's Resolution).
  void setInputScale(double scale);
  /// How the view compares the layers with the image (View > Comparison); remembered between runs.
  void setCompareMode(widgets::ImageView::CompareMode mode);
  /// The results on display, for the image on display.
  const FrameResult* currentResult() const;
  /// Writes one kind of result file in the background (what File > Export does once a file is chosen);
  /// exportFinished follows.
  void exportResult(ExportKind kind, const QString& path);
  /// Pose in each frame of the open video runs in the boxes the JSON file `path` gives for it (the
  /// format of `sapiens-cli run --bbox-file`: per frame, or the same for all; a frame listed with no
  /// boxes has nobody to pose), read in the background (what File > Person Boxes for Video does once a
  /// file is chosen); videoBoxesLoaded follows. Kept until the video is closed.
  void loadVideoBoxes(const QString& path);
  /// The people of the open video's frames that have had results, with their tracks.
  const VideoTracks& videoTracks() const { return tracks_; }
  /// Highlights the person of track `trackId` (-1: nobody) in every frame, their path over the picture
  /// and the frames they are seen in on the timeline (what clicking a person does).
  void selectTrack(int trackId);
  int selectedTrack() const { return selectedTrack_; }

 Q_SIGNALS:
  /// `path` has been decoded and drawn.
  void imageShown(const QString& path);
  /// `path` could not be opened; `reason` names the file and says why.
  void imageFailed(const QString& path, const QString& reason);
  /// Results for the image on display are drawn.
  void resultShown(const QString& path);
  /// A run failed; `reason` says why.
  void runFailed(const QString& reason);
  /// A checkpoint was loaded and is ready.
  void modelReady(sapiens::Task task, const QString& path);
  /// A checkpoint could not be loaded (wrong task, corrupt file); `reason` names the file.
  void modelProblem(sapiens::Task task, const QString& reason);
  /// The dense layer chosen in the Tasks & Layers dock is drawn (it is made in the background).
  void denseLayerShown();
  /// The 3-D view received the points of the image on display (previewCloud's: at most
  /// kMaxPreviewPoints).
  void pointCloudShown(qulonglong pointCount);
  /// An export finished; `error` is empty on success.
  void exportFinished(const QString& path, const QString& error);
  /// A video or camera opened (its first frame follows).
  void mediaOpened(const QString& name);
  /// Frame `index` of the video or camera is on display (with its results when they were awaited).
  void mediaFrameShown(qint64 index);
  /// An annotated video export ended; `error` is empty on success and after a cancel.
  void videoExportFinished(const QString& path, const QString& error);
  /// A person box file was read for the open video (`error` empty) or could not be (`error` says why).
  void videoBoxesLoaded(const QString& path, const QString& error);
  /// Track `trackId` (-1: none) is highlighted.
  void trackSelected(int trackId);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  static constexpr int kStatusMessageMs = 10000;  ///< how long a status-bar message stays
  void createDocks();
  QDockWidget* addDock(const QString& title, const char* name, QWidget* widget, Qt::DockWidgetArea area);
  void createActions();
  void createExports();
  void createInference();
  void createResultLayers();
  void createModels();
  // The Fine-tuning dock and its View menu entry (main_window_finetune.cpp); after createActions().
  void createFineTuningDock();
  // The Motion dock, its View menu entry and the recording it analyses (main_window_motion.cpp); after
  // createActions().
  void createMotionDock();
  void createPlayback();
  void createTracking(QMenu* file);
  void chooseVideoBoxes();
  void useVideoBoxes(const QString& path, const PersonBoxFile& boxes);
  /// The boxes the loaded box file gives for frame `index` (nullopt: none, pose finds people itself).
  std::optional<std::vector<BoundingBox>> videoBoxesFor(qint64 index) const;
  /// `tasks` without pose where the box file says nobody is in frame `index`.
  TaskSet tasksForFrame(TaskSet tasks, qint64 index) const;
  // Gives `poses` (frame `index`'s) their track ids.
  void recordTracks(qint64 index, std::vector<PoseInstance>& poses);
  void showSelectedTrack();
  void resetTracks();
  void chooseVideo();
  void chooseCamera();
  void onMediaOpened(const QString& name);
  void presentFrame(const MediaFrame& frame, const QString& key);
  void addPersonBox(const QRectF& imageRect);
  void deletePersonBox(int index);
  void runPoseInBoxes(const std::vector<BoundingBox>& boxes);
  void onResult(const QString& path, TaskSet tasks, const FrameResult& result, double wallMs, bool fromCache);
  void updateExportActions();
  void createStatusBar();
  void restoreSettings();
  void saveSettings() const;
  void stepImage(int delta);
  void chooseImages();
  void chooseFolder();
  void onImageLoaded(const QString& path, const cv::Mat& image);
  void onImageFailed(const QString& path, const QString& reason);
  void updateTitle();
  void updateFirstRunBanner();
  /// What closing would stop: "a fine-tuning run", "an annotated video export", "2 downloads".
  QStringList workUnderWay() const;
  void askBeforeQuitting(const QStringList& work);
  void stopWorkForQuitting();

  widgets::ImageView* view_ = nullptr;
  FirstRunBanner* banner_ = nullptr;
  bool quitConfirmed_ = false;
  widgets::LogPanel* logPanel_ = nullptr;
  MediaBrowser* media_ = nullptr;
  ModelBrowser* models_ = nullptr;
  QDockWidget* mediaDock_ = nullptr;
  QDockWidget* modelsDock_ = nullptr;
  QDockWidget* logDock_ = nullptr;
  FineTunePanel* fineTunePanel_ = nullptr;
  QDockWidget* fineTuneDock_ = nullptr;
  MotionDock* motionDock_ = nullptr;
  MotionRecording motion_;  // the open video's frames with people, for the Motion dock
  TasksPanel* tasksPanel_ = nullptr;
  QDockWidget* tasksDock_ = nullptr;
  widgets::PointCloudView* cloudView_ = nullptr;
  CloudOptionsBar* cloudOptions_ = nullptr;
  QDockWidget* cloudDock_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  ThemeMenu* themeMenu_ = nullptr;
  CompareModeMenu* compareMenu_ = nullptr;
  StatusReadouts* readouts_ = nullptr;
  ComputeToolBar* computeBar_ = nullptr;

  ImageLoader loader_;
  PlaybackController* playback_ = nullptr;
  MediaPlayer* player_ = nullptr;  // playback_'s
  ExportController* exports_ = nullptr;
  ModelController* modelControl_ = nullptr;
  QString currentKey_;
  qint64 currentFrame_ = -1;  // the video or camera frame on display; -1: a picture
  RecentFiles recent_;
  QString currentFile_;

  InferenceSession* inference_ = nullptr;
  ResultLayers* layers_ = nullptr;
  // The person boxes the user drew or kept for the image on display; pose runs in them when not empty.
  std::vector<BoundingBox> userBoxes_;
  // A pose run in the user's boxes is on its way: its poses replace the result's, the other layers stay.
  bool poseEditPending_ = false;
  VideoTracks tracks_;
  int selectedTrack_ = -1;
  std::optional<PersonBoxFile> videoBoxes_;
  QAction* videoBoxesAction_ = nullptr;
  // Point clouds and exports are built here, off the GUI thread; waited for in the destructor.
  QThreadPool background_;
};

}  // namespace sapiens::studio
