// MainWindow's Motion dock, kept apart from main_window.cpp: while a video file is open, each frame's time
// and the tracked poses of each frame shown with results are recorded (MotionRecording); the dock
// analyses them on Analyse, its cursor follows the frame on display and a click on its chart goes to
// that sample's frame.

#include "main_window.h"
#include "motion_dock.h"
#include "playback_controller.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>

namespace sapiens::studio {

void MainWindow::createMotionDock() {
  motionDock_ = new MotionDock(&background_);
  QDockWidget* dock = addDock(tr("Motion"), "motionDock", motionDock_, Qt::BottomDockWidgetArea);
  tabifyDockWidget(logDock_, dock);
  logDock_->raise();
  dock->hide();  // until View > Motion (a saved layout may show it)

  QAction* toggle = dock->toggleViewAction();
  toggle->setObjectName(QStringLiteral("actionToggle") + dock->objectName());
  toggle->setShortcut(QKeySequence(tr("Ctrl+Shift+A")));
  if (auto* view = menuBar()->findChild<QMenu*>(QStringLiteral("viewMenu"))) {
    QAction* before = nullptr;  // right after the Log dock's entry
    const QList<QAction*> actions = view->actions();
    for (int i = 0; i + 1 < actions.size(); ++i) {
      if (actions[i]->objectName() == QLatin1String("actionTogglelogDock")) before = actions[i + 1];
    }
    view->insertAction(before, toggle);
  }

  motionDock_->setSource([this] { return motion_.frames(); },
                         [this] { return float(tasksPanel_->keypointThreshold()); });
  const auto forget = [this] {
    motion_.clear();
    motionDock_->clear();
  };
  connect(playback_, &PlaybackController::opened, this, forget);
  connect(playback_, &PlaybackController::closed, this, forget);
  connect(playback_, &PlaybackController::frameReady, this, [this](const MediaFrame& frame) {
    if (player_->info().live) return;
    motion_.noteFrameTime(frame.index, frame.timestampSeconds);
    motionDock_->showTime(frame.timestampSeconds);
  });
  // After onResult: the poses on display carry the tracker's ids.
  connect(this, &MainWindow::resultShown, this, [this] {
    if (currentFrame_ < 0 || !player_->isOpen() || player_->info().live || !currentResult()) return;
    motion_.record(currentFrame_, currentResult()->poses);
    motionDock_->setRecordedFrames(motion_.frameCount());
  });
  connect(motionDock_, &MotionDock::seekRequested, player_, &MediaPlayer::seek);
}

}  // namespace sapiens::studio
