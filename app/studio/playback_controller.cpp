#include "playback_controller.h"

#include "timeline.h"

#include "sapiens/common/log.h"

#include <QAction>
#include <QFileInfo>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QToolBar>

#include <algorithm>
#include <utility>

namespace sapiens::studio {
namespace {
constexpr int kMessageMs = 10000;
}  // namespace

PlaybackController::PlaybackController(QMainWindow* window, Hooks hooks)
    : QObject(window), window_(window), hooks_(std::move(hooks)), player_(new MediaPlayer(this)) {
  rateLabel_ = new QLabel;
  rateLabel_->setObjectName(QStringLiteral("rateLabel"));
  rateLabel_->setToolTip(
      tr("During playback: frames shown per second, the time from reading a frame to "
         "showing it with its results, and for cameras the frames dropped"));
  connect(player_, &MediaPlayer::opened, this, &PlaybackController::onOpened);
  connect(player_, &MediaPlayer::frameReady, this, &PlaybackController::onFrame);
  connect(player_, &MediaPlayer::failed, this, &PlaybackController::onFailed);
  connect(player_, &MediaPlayer::ended, this,
          [this] { Q_EMIT message(tr("End of %1").arg(QFileInfo(player_->name()).fileName()), kMessageMs); });
}

QString PlaybackController::frameKey(const QString& source, qint64 index) {
  return source + QStringLiteral("#frame") + QString::number(index);
}

QAction* PlaybackController::addPlaybackAction(QMenu* menu, const char* name, const QString& text,
                                               const QKeySequence& keys, std::function<void(bool)> slot) {
  QAction* action = menu->addAction(text);
  action->setObjectName(QLatin1String(name));
  action->setShortcut(keys);
  connect(action, &QAction::triggered, this, std::move(slot));
  actions_.push_back(action);
  return action;
}

void PlaybackController::createActions(QMenu* file, QAction* before) {
  timeline_ = new widgets::Timeline;
  timeline_->setObjectName(QStringLiteral("timeline"));
  timeline_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
  timelineBar_ = new QToolBar(tr("Timeline"), window_);
  timelineBar_->setObjectName(QStringLiteral("timelineBar"));
  timelineBar_->setMovable(false);
  timelineBar_->addWidget(timeline_);
  window_->addToolBar(Qt::BottomToolBarArea, timelineBar_);

  auto* closeAction = new QAction(tr("C&lose Video or Camera"), this);
  closeAction->setObjectName(QStringLiteral("actionCloseMedia"));
  closeAction->setShortcut(QKeySequence(tr("Ctrl+Shift+W")));
  connect(closeAction, &QAction::triggered, this, &PlaybackController::close);
  file->insertAction(before, closeAction);
  actions_.push_back(closeAction);

  QMenu* menu = window_->menuBar()->addMenu(tr("&Playback"));
  menu->setObjectName(QStringLiteral("playbackMenu"));
  addPlaybackAction(menu, "actionPlayPause", tr("&Play / Pause"), QKeySequence(Qt::Key_Space),
                    [this](bool) { player_->togglePlaying(); });
  addPlaybackAction(menu, "actionNextFrame", tr("&Next Frame"), QKeySequence(Qt::Key_Period),
                    [this](bool) { player_->step(1); });
  addPlaybackAction(menu, "actionPreviousFrame", tr("P&revious Frame"), QKeySequence(Qt::Key_Comma),
                    [this](bool) { player_->step(-1); });
  addPlaybackAction(menu, "actionFirstFrame", tr("&First Frame"), QKeySequence(Qt::Key_Home), [this](bool) {
    player_->pause();
    player_->seek(0);
  });
  addPlaybackAction(menu, "actionLastFrame", tr("&Last Frame"), QKeySequence(Qt::Key_End), [this](bool) {
    player_->pause();
    player_->seek(std::max<qint64>(0, player_->info().frameCount - 1));
  });
  QAction* loop = addPlaybackAction(menu, "actionLoop", tr("L&oop"), QKeySequence(Qt::Key_L),
                                    [this](bool on) { timeline_->setLooping(on); });
  loop->setCheckable(true);

  const bool looping = QSettings().value(QStringLiteral("playback/loop"), false).toBool();
  player_->setLooping(looping);
  timeline_->setLooping(looping);
  loop->setChecked(looping);

  connect(player_, &MediaPlayer::playingChanged, this, [this](bool playing) {
    timeline_->setPlaying(playing);
    if (playing) {
      tasksOff_ = false;
      lastFrameAt_ = {};
    }
  });
  connect(timeline_, &widgets::Timeline::seekRequested, player_, &MediaPlayer::seek);
  connect(timeline_, &widgets::Timeline::playPauseRequested, player_, &MediaPlayer::togglePlaying);
  connect(timeline_, &widgets::Timeline::stepRequested, player_, &MediaPlayer::step);
  connect(timeline_, &widgets::Timeline::loopingChanged, this, [this, loop](bool on) {
    player_->setLooping(on);
    loop->setChecked(on);
    QSettings().setValue(QStringLiteral("playback/loop"), on);
  });
  updateActions();
}

void PlaybackController::updateActions() {
  const bool open = player_->isOpen();
  const bool file = open && !player_->info().live;
  for (QAction* action : actions_) {
    const bool stepping = action->objectName() != QLatin1String("actionPlayPause") &&
                          action->objectName() != QLatin1String("actionCloseMedia");
    action->setEnabled(stepping ? file : open);
  }
  Q_EMIT stateChanged();
}

void PlaybackController::open(const QString& pathOrDevice, const CameraOptions& camera) {
  dropHeldFrame();
  Q_EMIT message(tr("Opening %1...").arg(pathOrDevice), 0);
  tasksOff_ = false;
  framesPerSecond_ = 0;
  latencyMs_ = 0;
  lastFrameIndex_ = -1;
  droppedFrames_ = 0;
  lastFrameAt_ = {};
  rateLabel_->clear();
  player_->open(pathOrDevice, camera);
  updateActions();
}

void PlaybackController::close() {
  if (!player_->isOpen()) return;
  dropHeldFrame();
  logger().info("closed {}", player_->name().toStdString());
  player_->close();
  timelineBar_->hide();
  rateLabel_->clear();
  Q_EMIT closed();
  updateActions();
}

void PlaybackController::onOpened(const QString& name) {
  const SourceInfo& info = player_->info();
  timeline_->setMedia(info.frameCount, info.fps, info.live);
  timelineBar_->show();
  updateActions();
  const QString frames = info.frameCount > 0 ? tr(", %1 frames").arg(info.frameCount) : QString();
  Q_EMIT message(tr("%1: %2 x %3, %4 fps, %5%6")
                     .arg(QFileInfo(name).fileName())
                     .arg(info.width)
                     .arg(info.height)
                     .arg(info.fps, 0, 'f', 2)
                     .arg(QString::fromStdString(info.codec), frames),
                 kMessageMs);
  Q_EMIT opened(name);
}

void PlaybackController::onFailed(const QString& name, const QString& reason) {
  logger().error("{}", reason.toStdString());
  Q_EMIT message(reason, kMessageMs);
  // Before `opened` the source never worked: nothing of it stays. Later (a damaged frame, an unplugged
  // camera) the frames shown so far stay on screen.
  if (player_->info().codec.empty()) close();
  Q_EMIT failed(name, reason);
}

void PlaybackController::onFrame(const MediaFrame& frame, bool playing) {
  const QString key = frameKey(player_->name(), frame.index);
  const TaskSet tasks = hooks_.tasksFor(frame.index);
  if (playing && !tasksOff_ && tasks != 0) {
    dropHeldFrame();
    heldFrame_ = frame;
    heldKey_ = key;
    hooks_.request(key, frame, tasks);  // a cached result comes back at once
    return;
  }
  dropHeldFrame();  // a seek or a step supersedes a frame held for its results
  timeline_->setPosition(frame.index, frame.timestampSeconds);
  Q_EMIT frameReady(frame, key);
  if (playing) {
    updateRate(frame);
    player_->frameDone();
  } else if (tasks != 0) {
    Q_EMIT runWanted();
  }
}

void PlaybackController::resultsArrived(const QString& key, bool failedRun) {
  if (!heldFrame_ || key != heldKey_) return;
  if (failedRun) tasksOff_ = true;  // one message, not one per frame
  releaseHeldFrame();
}

void PlaybackController::releaseHeldFrame() {
  if (!heldFrame_) return;
  const MediaFrame frame = std::move(*heldFrame_);
  heldFrame_.reset();
  timeline_->setPosition(frame.index, frame.timestampSeconds);
  Q_EMIT frameReady(frame, heldKey_);
  updateRate(frame);
  player_->frameDone();  // the next frame is read while this one's layers are drawn
}

void PlaybackController::dropHeldFrame() {
  if (!heldFrame_) return;
  heldFrame_.reset();
  player_->frameDone();
}

void PlaybackController::updateRate(const MediaFrame& frame) {
  using namespace std::chrono;
  const auto now = steady_clock::now();
  const double latency = duration<double, std::milli>(now - frame.readAt).count();
  // Smoothed over the last few frames, so the figures can be read while they change.
  const auto smooth = [](double average, double sample) {
    return average == 0 ? sample : 0.8 * average + 0.2 * sample;
  };
  latencyMs_ = smooth(latencyMs_, latency);
  if (lastFrameAt_ != steady_clock::time_point{}) {
    const double seconds = duration<double>(now - lastFrameAt_).count();
    if (seconds > 0) framesPerSecond_ = smooth(framesPerSecond_, 1.0 / seconds);
  }
  lastFrameAt_ = now;
  const bool live = player_->info().live;
  if (live && lastFrameIndex_ >= 0) droppedFrames_ += std::max<qint64>(0, frame.index - lastFrameIndex_ - 1);
  lastFrameIndex_ = frame.index;
  QString text = tr("%1 fps  %2 ms").arg(framesPerSecond_, 0, 'f', 1).arg(latencyMs_, 0, 'f', 0);
  if (live) text += tr("  %1 dropped").arg(droppedFrames_);
  rateLabel_->setText(text);
}

}  // namespace sapiens::studio
