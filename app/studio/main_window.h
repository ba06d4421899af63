#pragma once
// The studio's main window: the image view in the centre, the Media, Models, Tasks & Layers, 3-D and
// Log docks, menus, status bar, drag and drop, and the settings that persist between runs. Task models
// run on the inference thread (InferenceSession); their results are drawn as layers over the image,
// read out under the cursor, shown in 3-D and exported from File > Export.

#include "image_loader.h"
#include "image_view.h"
#include "recent_files.h"
#include "result_export.h"
#include "task_set.h"
#include "tasks_panel.h"
#include "theme.h"

#include "sapiens/pipeline/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QMainWindow>
#include <QString>
#include <QStringList>
#include <QThreadPool>

#include <map>
#include <optional>
#include <vector>

class QAction;
class QActionGroup;
class QDockWidget;
class QLabel;
class QMenu;

namespace sapiens::widgets {
class LogPanel;
class PointCloudView;
}  // namespace sapiens::widgets

namespace sapiens::studio {

class ComputeToolBar;
class InferenceSession;
class MediaBrowser;
class ModelBrowser;

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens image files and folders (their images, not recursively) into the Media dock and shows the
  /// first image. Problems are reported in the status bar and the log, never as a modal dialog.
  void openPaths(const QStringList& paths);
  /// Decodes `path` in the background and shows it when ready.
  void showFile(const QString& path);

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

  /// Loads `path` as the `task` model in the background (what Models > Load Checkpoint does once a
  /// file is chosen). Problems are reported in the status bar and the log (modelProblem).
  void loadCheckpoint(Task task, const QString& path);
  /// Runs the tasks checked in the Tasks & Layers dock on the image on display (Ctrl+R), pose in the
  /// person boxes the user drew for it, if any.
  void runTasks();
  /// Runs the models on `device` in `dtype` from now on (what the Compute toolbar does): the loaded
  /// models are loaded there again in the background. A device or precision not offered here is
  /// refused with a message in the status bar.
  void setCompute(const QString& device, const QString& dtype);
  /// How the view compares the layers with the image (View > Comparison); remembered between runs.
  void setCompareMode(widgets::ImageView::CompareMode mode);
  /// The results on display, for the image on display.
  const FrameResult* currentResult() const { return result_ ? &*result_ : nullptr; }
  /// Writes one kind of result file in the background (what File > Export does once a file is chosen);
  /// exportFinished follows.
  void exportResult(ExportKind kind, const QString& path);

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

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void createDocks();
  void createActions();
  void createModelActions();
  void createExportActions(QMenu* file);
  void createInference();
  void createComputeToolBar();
  void createCompareActions(QMenu* view);
  void addPersonBox(const QRectF& imageRect);
  void deletePersonBox(int index);
  void runPoseInBoxes(const std::vector<BoundingBox>& boxes);
  void discoverCheckpoints();
  void chooseCheckpoint(Task task);
  void chooseExport(ExportKind kind);
  void onResult(const QString& path, TaskSet tasks, const FrameResult& result, double wallMs, bool fromCache);
  void applyLayers();
  void showDenseLayer();
  void showPointCloud();
  void updateExportActions();
  void updateModelLabels();
  void reportHoveredResult(const QPoint& pixel);
  void createStatusBar();
  void restoreSettings();
  void saveSettings() const;
  void rebuildRecentMenu();
  void setTheme(Theme theme);
  void stepImage(int delta);
  void chooseImages();
  void chooseFolder();
  void showAbout();
  void openLogFolder();
  void onImageLoaded(const QString& path, const cv::Mat& image);
  void onImageFailed(const QString& path, const QString& reason);
  void updateTitle();
  QString dialogDirectory() const;

  widgets::ImageView* view_ = nullptr;
  widgets::LogPanel* logPanel_ = nullptr;
  MediaBrowser* media_ = nullptr;
  ModelBrowser* models_ = nullptr;
  QDockWidget* mediaDock_ = nullptr;
  QDockWidget* modelsDock_ = nullptr;
  QDockWidget* logDock_ = nullptr;
  TasksPanel* tasksPanel_ = nullptr;
  QDockWidget* tasksDock_ = nullptr;
  widgets::PointCloudView* cloudView_ = nullptr;
  QDockWidget* cloudDock_ = nullptr;
  QMenu* exportMenu_ = nullptr;
  std::map<ExportKind, QAction*> exportActions_;
  QLabel* modelLabel_ = nullptr;
  QLabel* latencyLabel_ = nullptr;
  QLabel* readoutLabel_ = nullptr;
  QMenu* recentMenu_ = nullptr;
  QActionGroup* themeGroup_ = nullptr;
  QActionGroup* compareGroup_ = nullptr;
  ComputeToolBar* computeBar_ = nullptr;
  QLabel* deviceLabel_ = nullptr;
  QLabel* sizeLabel_ = nullptr;
  QLabel* zoomLabel_ = nullptr;
  QLabel* hoverLabel_ = nullptr;

  ImageLoader loader_;
  RecentFiles recent_;
  QString currentFile_;

  InferenceSession* inference_ = nullptr;
  std::optional<FrameResult> result_;
  cv::Mat resultImage_;  // the picture result_ belongs to
  // The person boxes the user drew or kept for the image on display; pose runs in them when not empty.
  std::vector<BoundingBox> userBoxes_;
  // A pose run in the user's boxes is on its way: its poses replace result_'s, the other layers stay.
  bool poseEditPending_ = false;
  quint64 cloudGeneration_ = 0;
  quint64 resultGeneration_ = 0;  // counts changes of result_
  quint64 layersResultGeneration_ = 0;
  DenseLayer denseLayer_ = DenseLayer::None;
  quint64 denseResultGeneration_ = 0;
  quint64 denseRequest_ = 0;
  // Point clouds and exports are built here, off the GUI thread; waited for in the destructor.
  QThreadPool background_;
};

}  // namespace sapiens::studio
