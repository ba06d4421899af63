#pragma once
// Video and camera playback in the main window: the media player, the timeline below the view, the
// Playback menu and the rate read-out (frames per second, latency, frames dropped). While playing with
// tasks to run, each frame is held until its results come, so overlays never lag the picture; the
// window decides which tasks a frame runs and shows the frames this hands it.

#include "media_player.h"
#include "task_set.h"

#include <QObject>
#include <QString>

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

class QAction;
class QLabel;
class QMainWindow;
class QMenu;
class QToolBar;

namespace sapiens::widgets {
class Timeline;
}

namespace sapiens::studio {

class PlaybackController : public QObject {
  Q_OBJECT

 public:
  struct Hooks {
    /// The tasks to run on frame `index` as it arrives (0: none; show it at once).
    std::function<TaskSet(qint64 index)> tasksFor;
    /// Asks for frame `frame`'s results under `key`; resultsArrived follows (at once when cached).
    std::function<void(const QString& key, const MediaFrame& frame, TaskSet tasks)> request;
  };
  PlaybackController(QMainWindow* window, Hooks hooks);

  /// "Close Video or Camera" into `file` before `before`, the Playback menu and the timeline toolbar.
  void createActions(QMenu* file, QAction* before);
  MediaPlayer* player() const { return player_; }
  widgets::Timeline* timeline() const { return timeline_; }
  QToolBar* timelineBar() const { return timelineBar_; }
  /// The rate read-out, for the status bar.
  QLabel* rateLabel() const { return rateLabel_; }
  static QString frameKey(const QString& source, qint64 index);

  void open(const QString& pathOrDevice, const CameraOptions& camera);
  /// Closes the video or camera (closed follows when one was open).
  void close();
  /// The results for `key` came, or its run failed (then the rest of this playback runs no tasks): a
  /// frame held for them is shown and playback goes on.
  void resultsArrived(const QString& key, bool failed);
  /// Lets go of a frame held for its results (a run for something else supersedes it).
  void dropHeldFrame();

 Q_SIGNALS:
  /// A source opened (the timeline is set up; its first frame follows).
  void opened(const QString& name);
  /// `name` failed; before `opened` it has been closed again.
  void failed(const QString& name, const QString& reason);
  void closed();
  /// Show this frame now (with its results when they were awaited).
  void frameReady(const MediaFrame& frame, const QString& key);
  /// A paused frame (a step or seek) is on display and its tasks should run.
  void runWanted();
  /// What can be done changed (a source opened or closed, an export of it may start).
  void stateChanged();
  void message(const QString& text, int timeoutMs);

 private:
  void onFrame(const MediaFrame& frame, bool playing);
  void onOpened(const QString& name);
  void onFailed(const QString& name, const QString& reason);
  void releaseHeldFrame();
  void updateActions();
  void updateRate(const MediaFrame& frame);
  QAction* addPlaybackAction(QMenu* menu, const char* name, const QString& text, const QKeySequence& keys,
                             std::function<void(bool)> slot);

  QMainWindow* window_;
  Hooks hooks_;
  MediaPlayer* player_;
  widgets::Timeline* timeline_ = nullptr;
  QToolBar* timelineBar_ = nullptr;
  QLabel* rateLabel_ = nullptr;
  std::vector<QAction*> actions_;
  std::optional<MediaFrame> heldFrame_;
  QString heldKey_;
  // A run failed during this playback: the rest plays without tasks (until play is pressed again).
  bool tasksOff_ = false;
  std::chrono::steady_clock::time_point lastFrameAt_;
  double framesPerSecond_ = 0;
  double latencyMs_ = 0;
  qint64 lastFrameIndex_ = -1;
  qint64 droppedFrames_ = 0;
};

}  // namespace sapiens::studio
