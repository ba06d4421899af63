// MainWindow's videos and cameras, kept apart from main_window.cpp: the playback controller's hooks (which
// tasks a frame gets, the request with the frame's person boxes), opening and closing media and putting a
// decoded frame on display.

#include "camera_dialog.h"
#include "export_controller.h"
#include "file_dialogs.h"
#include "inference_session.h"
#include "main_window.h"
#include "media_browser.h"
#include "playback_controller.h"
#include "result_layers.h"
#include "status_readouts.h"
#include "tasks_panel.h"

#include "image_view.h"

#include <QAction>
#include <QFileDialog>
#include <QStatusBar>

namespace sapiens::studio {

void MainWindow::exportAnnotatedVideo(const QString& path) {
  exports_->exportAnnotatedVideo(path);
}

QString MainWindow::frameKey(const QString& source, qint64 index) {
  return PlaybackController::frameKey(source, index);
}

void MainWindow::createPlayback() {
  PlaybackController::Hooks hooks;
  hooks.tasksFor = [this](qint64 index) {
    return tasksPanel_->runsOnOpen() ? tasksForFrame(tasksPanel_->selectedTasks(), index) : TaskSet(0);
  };
  hooks.request = [this](const QString& key, const MediaFrame& frame, TaskSet tasks) {
    inference_->request(key, frame.bgr, tasks,
                        videoBoxesFor(frame.index).value_or(std::vector<BoundingBox>()));
  };
  playback_ = new PlaybackController(this, std::move(hooks));
  player_ = playback_->player();
  connect(playback_, &PlaybackController::opened, this, &MainWindow::onMediaOpened);
  connect(playback_, &PlaybackController::failed, this, &MainWindow::imageFailed);
  connect(playback_, &PlaybackController::closed, this, [this] {
    currentFrame_ = -1;
    videoBoxes_.reset();
    resetTracks();
  });
  connect(playback_, &PlaybackController::frameReady, this, &MainWindow::presentFrame);
  connect(playback_, &PlaybackController::runWanted, this, &MainWindow::runTasks);
  connect(playback_, &PlaybackController::stateChanged, this, [this] {
    if (videoBoxesAction_) videoBoxesAction_->setEnabled(player_->isOpen() && !player_->info().live);
    updateExportActions();
  });
  connect(playback_, &PlaybackController::message, this,
          [this](const QString& text, int timeoutMs) { statusBar()->showMessage(text, timeoutMs); });
}

void MainWindow::chooseVideo() {
  const QString file =
      QFileDialog::getOpenFileName(this, tr("Open Video"), dialogDirectory(), tr(kVideoFilter));
  if (file.isEmpty()) return;
  rememberDialogDirectory(file);
  openPaths({file});
}

void MainWindow::chooseCamera() {
  CameraDialog dialog(this);
  if (dialog.exec() == QDialog::Accepted) openMedia(dialog.device(), dialog.options());
}

void MainWindow::openMedia(const QString& pathOrDevice, const CameraOptions& camera) {
  inference_->supersede();
  playback_->open(pathOrDevice, camera);
}

void MainWindow::closeMedia() {
  playback_->close();
}

void MainWindow::onMediaOpened(const QString& name) {
  currentFile_ = name;
  videoBoxes_.reset();
  resetTracks();
  if (!player_->info().live) {
    media_->markCurrent(name);
    recent_.add(name);
  }
  updateTitle();
  Q_EMIT mediaOpened(name);
}

void MainWindow::presentFrame(const MediaFrame& frame, const QString& key) {
  currentKey_ = key;
  currentFrame_ = frame.index;
  layers_->clear(frame.bgr);
  userBoxes_ = videoBoxesFor(frame.index).value_or(std::vector<BoundingBox>());
  poseEditPending_ = false;
  view_->setFrame(frame.bgr);
  const TaskSet selected = tasksPanel_->selectedTasks();
  if (contains(selected, Task::Pose) && !contains(tasksForFrame(selected, frame.index), Task::Pose)) {
    std::vector<PoseInstance> nobody;  // the box file says so
    tracks_.record(frame.index, nobody);
    if (selectedTrack_ >= 0) showSelectedTrack();
  }
  readouts_->showPictureSize(frame.bgr.cols, frame.bgr.rows);
  updateExportActions();
  Q_EMIT mediaFrameShown(frame.index);
}

}  // namespace sapiens::studio
