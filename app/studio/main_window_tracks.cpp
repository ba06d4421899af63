// MainWindow's people tracks over a video, kept apart from main_window.cpp: every frame's poses are
// recorded in the core's VideoTracks as they come (played, stepped or scrubbed), so each person keeps an
// id; a click on a person highlights their track, in the picture (their path) and on the timeline (the
// frames they are seen in). Person boxes per frame can come from a file, as with `run --bbox-file`.

#include "background_work.h"
#include "file_dialogs.h"
#include "inference_session.h"
#include "main_window.h"
#include "playback_controller.h"

#include "image_view.h"
#include "timeline.h"
#include "track_colors.h"

#include "sapiens/common/log.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>

#include <exception>

namespace sapiens::studio {
namespace {

constexpr int kTrackMessageMs = 10000;

QString spansText(const std::vector<TrackSpan>& spans) {
  QStringList parts;
  for (const TrackSpan& span : spans) {
    parts << (span.first == span.last ? QString::number(span.first + 1)
                                      : QStringLiteral("%1-%2").arg(span.first + 1).arg(span.last + 1));
  }
  return parts.join(QStringLiteral(", "));
}

}  // namespace

void MainWindow::createTracking(QMenu* file) {
  videoBoxesAction_ = new QAction(tr("Person &Boxes for Video..."), this);
  videoBoxesAction_->setObjectName(QStringLiteral("actionVideoPersonBoxes"));
  videoBoxesAction_->setShortcut(QKeySequence(tr("Ctrl+Shift+B")));
  videoBoxesAction_->setToolTip(
      tr("Pose in each frame runs in the boxes a JSON file gives for it (the format of sapiens-cli run "
         "--bbox-file)"));
  connect(videoBoxesAction_, &QAction::triggered, this, &MainWindow::chooseVideoBoxes);
  file->insertAction(recentMenu_->menuAction(), videoBoxesAction_);
  file->insertSeparator(recentMenu_->menuAction());
  videoBoxesAction_->setEnabled(false);
  connect(view_, &widgets::ImageView::personClicked, this, [this](int index) {
    const auto& poses = view_->poses();
    selectTrack(index >= 0 && index < int(poses.size()) ? poses[std::size_t(index)].trackId : -1);
  });
}

void MainWindow::chooseVideoBoxes() {
  const QString file =
      QFileDialog::getOpenFileName(this, tr("Person Boxes for %1").arg(QFileInfo(currentFile_).fileName()),
                                   dialogDirectory(), tr("Person boxes (*.json);;All files (*)"));
  if (file.isEmpty()) return;
  rememberDialogDirectory(file);
  loadVideoBoxes(file);
}

void MainWindow::loadVideoBoxes(const QString& path) {
  if (!player_->isOpen() || player_->info().live) {
    const QString error = tr("Open a video file first: the boxes are per frame of a video");
    statusBar()->showMessage(error, kTrackMessageMs);
    Q_EMIT videoBoxesLoaded(path, error);
    return;
  }
  const QString video = player_->name();
  runInBackground(
      background_, this, [path] { return std::optional(readPersonBoxFile(path.toStdString())); },
      [this, path, video](const std::optional<PersonBoxFile>& boxes, const QString& error) {
        if (!error.isEmpty()) {
          logger().error("{}", error.toStdString());
          statusBar()->showMessage(error, kTrackMessageMs);
          Q_EMIT videoBoxesLoaded(path, error);
          return;
        }
        if (!player_->isOpen() || player_->name() != video) {
          const QString gone = tr("%1 was closed before its person boxes were read").arg(video);
          statusBar()->showMessage(gone, kTrackMessageMs);
          Q_EMIT videoBoxesLoaded(path, gone);
          return;
        }
        useVideoBoxes(path, *boxes);
      });
}

void MainWindow::useVideoBoxes(const QString& path, const PersonBoxFile& boxes) {
  videoBoxes_ = boxes;
  // The tracks so far were made in other boxes.
  inference_->clearCache();
  resetTracks();
  const QString message = tr("Person boxes from %1: %2 frames listed%3")
                              .arg(QFileInfo(path).fileName())
                              .arg(boxes.byFrame.size())
                              .arg(boxes.everyFrame.empty() ? QString() : tr(", boxes for the others"));
  logger().info("{}", message.toStdString());
  statusBar()->showMessage(message, kTrackMessageMs);
  userBoxes_ = videoBoxesFor(player_->position()).value_or(std::vector<BoundingBox>());
  Q_EMIT videoBoxesLoaded(path, QString());
  if (tasksPanel_->runsOnOpen() && tasksPanel_->selectedTasks() != 0) runTasks();
}

std::optional<std::vector<BoundingBox>> MainWindow::videoBoxesFor(qint64 index) const {
  if (!videoBoxes_) return std::nullopt;
  const auto listed = videoBoxes_->byFrame.find(index);
  if (listed != videoBoxes_->byFrame.end()) return listed->second;
  if (!videoBoxes_->everyFrame.empty()) return videoBoxes_->everyFrame;
  return std::nullopt;
}

TaskSet MainWindow::tasksForFrame(TaskSet tasks, qint64 index) const {
  const auto boxes = videoBoxesFor(index);
  // The box file says nobody is in this frame: there is nobody to pose.
  if (boxes && boxes->empty()) tasks &= ~taskBit(Task::Pose);
  return tasks;
}

void MainWindow::resetTracks() {
  tracks_.clear();
  selectTrack(-1);
}

void MainWindow::recordTracks(qint64 index, std::vector<PoseInstance>& poses) {
  if (!contains(tasksPanel_->selectedTasks(), Task::Pose)) return;
  tracks_.record(index, poses);
  if (selectedTrack_ >= 0) showSelectedTrack();
}

void MainWindow::selectTrack(int trackId) {
  if (trackId == selectedTrack_) return;
  selectedTrack_ = trackId;
  showSelectedTrack();
  if (trackId >= 0) {
    const std::vector<TrackSpan> spans = tracks_.spansOf(trackId);
    qint64 frames = 0;
    for (const TrackSpan& span : spans) frames += span.last - span.first + 1;
    statusBar()->showMessage(
        tr("Person #%1: seen in %2 frames so far (%3)").arg(trackId).arg(frames).arg(spansText(spans)),
        kTrackMessageMs);
  }
  Q_EMIT trackSelected(trackId);
}

void MainWindow::showSelectedTrack() {
  if (selectedTrack_ < 0) {
    view_->setHighlightedTrack(-1);
    playback_->timeline()->setTrackSpans({}, QColor(), QString());
    return;
  }
  const std::vector<TrackSpan> spans = tracks_.spansOf(selectedTrack_);
  // The path: where the person stood (their box's bottom centre), frame by frame.
  std::vector<QPointF> path;
  for (const auto& [index, box] : tracks_.boxesOf(selectedTrack_))
    path.emplace_back((box.x1 + box.x2) / 2.0 + 0.5, box.y2 + 0.5);
  view_->setHighlightedTrack(selectedTrack_, path);
  playback_->timeline()->setTrackSpans(
      spans, widgets::trackColor(selectedTrack_),
      tr("Person #%1 is seen in frames %2").arg(selectedTrack_).arg(spansText(spans)));
}

}  // namespace sapiens::studio
