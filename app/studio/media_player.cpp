#include "media_player.h"

#include "thread_priority.h"

#include "sapiens/common/log.h"

#include <QMetaObject>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace sapiens::studio {
namespace {

using Clock = std::chrono::steady_clock;

// Behind the file's own clock by more than this (a slow model), playback restarts its clock from the
// frame at hand instead of rushing to catch up.
constexpr std::chrono::milliseconds kLateRestart{150};

std::unique_ptr<FrameSource> openSource(const std::string& pathOrDevice, const CameraOptions& camera) {
  if (pathOrDevice.rfind("/dev/video", 0) == 0) return std::make_unique<CameraSource>(pathOrDevice, camera);
  return openFrameSource(pathOrDevice);
}

MediaFrame toMediaFrame(Frame&& frame) {
  MediaFrame out;
  out.bgr = std::move(frame.bgr);
  out.index = frame.index;
  out.timestampSeconds = frame.timestampSeconds;
  out.readAt = Clock::now();
  return out;
}

}  // namespace

class MediaPlayer::Worker {
 public:
  Worker(MediaPlayer* player, quint64 generation, std::string path, const CameraOptions& camera, bool looping)
      : player_(player), generation_(generation), path_(std::move(path)), camera_(camera), looping_(looping) {
    thread_ = std::thread([this] { run(); });
  }
  ~Worker() {
    requestQuit();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void requestQuit() {
    update([this] { quit_ = true; });
  }
  void setPlaying(bool playing) {
    update([this, playing] {
      playing_ = playing;
      if (playing) restartClock_ = true;
    });
  }
  void setLooping(bool looping) {
    update([this, looping] { looping_ = looping; });
  }
  void seek(std::int64_t index) {
    update([this, index] {
      seekTo_ = index;
      awaitingDone_ = false;  // the frame the window held for playback is superseded
    });
  }
  void frameDone() {
    update([this] { awaitingDone_ = false; });
  }
  bool finished() const { return finished_.load(); }

 private:
  template <typename Change>
  void update(Change change) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      change();
    }
    wake_.notify_all();
  }

  // Runs `deliver(player)` on the GUI thread unless the player has moved on to another source.
  template <typename Deliver>
  void post(Deliver deliver) {
    MediaPlayer* player = player_;
    const quint64 generation = generation_;
    QMetaObject::invokeMethod(
        player,
        [player, generation, deliver] {
          if (player->generation_ == generation) deliver(player);
        },
        Qt::QueuedConnection);
  }

  void postFailure(const std::string& reason) {
    const QString name = QString::fromStdString(path_);
    const QString text = QString::fromStdString(reason);
    post([name, text](MediaPlayer* player) { Q_EMIT player->failed(name, text); });
  }

  void postFrame(Frame&& frame, bool playback) {
    const MediaFrame out = toMediaFrame(std::move(frame));
    post([out, playback](MediaPlayer* player) {
      player->position_ = out.index;
      Q_EMIT player->frameReady(out, playback);
    });
  }

  void stopPlaying(bool atEnd) {
    update([this] { playing_ = false; });
    post([atEnd](MediaPlayer* player) {
      player->setPlaying(false);
      if (atEnd) Q_EMIT player->ended();
    });
  }

  void run() {
    runInBackgroundPriority();
    try {
      loop();
    } catch (const std::exception& e) {
      logger().error("media player: {}", e.what());
      postFailure(e.what());
    }
    finished_ = true;
  }

  void loop() {
    std::unique_ptr<FrameSource> source = openSource(path_, camera_);
    const SourceInfo info = source->info();
    const bool live = info.live;
    logger().info("opened {} ({}x{}, {:.2f} fps, {}, {} frames)", path_, info.width, info.height, info.fps,
                  info.codec, info.frameCount);
    post([info](MediaPlayer* player) {
      player->info_ = info;
      Q_EMIT player->opened(player->name_);
      if (info.live) player->setPlaying(true);
    });
    if (live) {
      setPlaying(true);
    } else if (auto first = source->next()) {
      postFrame(std::move(*first), false);
    } else {
      throw MediaError(path_, "holds no frame");
    }

    Clock::time_point clockWall;
    double clockTimestamp = 0;
    for (;;) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return quit_ || seekTo_ || (playing_ && !awaitingDone_); });
      if (quit_) return;
      if (seekTo_) {
        std::int64_t index = std::max<std::int64_t>(*seekTo_, 0);
        seekTo_.reset();
        restartClock_ = true;
        lock.unlock();
        if (!source->seekable()) continue;
        if (info.frameCount > 0) index = std::min(index, info.frameCount - 1);
        try {
          source->seek(index);
          if (auto frame = source->next()) postFrame(std::move(*frame), false);
        } catch (const std::exception& e) {
          postFailure(e.what());
        }
        continue;
      }
      bool restart = std::exchange(restartClock_, false);
      lock.unlock();

      std::optional<Frame> frame;
      try {
        frame = source->next();
        if (!frame && looping() && source->seekable()) {
          source->seek(0);
          frame = source->next();
          restart = true;
        }
      } catch (const std::exception& e) {
        postFailure(e.what());
        stopPlaying(false);
        if (live) return;  // an unplugged camera: nothing more will come
        continue;
      }
      if (!frame) {
        stopPlaying(true);
        continue;
      }

      if (!live) {
        // Pace by the file's timestamps, against a clock restarted at each play, seek and late frame.
        const auto now = Clock::now();
        const auto due =
            clockWall + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(frame->timestampSeconds - clockTimestamp));
        if (restart || now > due + kLateRestart || frame->timestampSeconds < clockTimestamp) {
          clockWall = now;
          clockTimestamp = frame->timestampSeconds;
        } else if (due > now) {
          std::unique_lock<std::mutex> waitLock(mutex_);
          wake_.wait_until(waitLock, due, [this] { return quit_ || seekTo_ || !playing_; });
          if (quit_) return;
          if (seekTo_) continue;  // this frame is no longer wanted
        }
      }
      bool playback = false;
      {
        std::lock_guard<std::mutex> lockDelivery(mutex_);
        playback = playing_;
        awaitingDone_ = playback;
      }
      postFrame(std::move(*frame), playback);
    }
  }

  bool looping() {
    std::lock_guard<std::mutex> lock(mutex_);
    return looping_;
  }

  MediaPlayer* player_;
  const quint64 generation_;
  const std::string path_;
  const CameraOptions camera_;

  std::mutex mutex_;
  std::condition_variable wake_;
  bool quit_ = false;
  bool playing_ = false;
  bool awaitingDone_ = false;
  bool restartClock_ = true;
  bool looping_ = false;
  std::optional<std::int64_t> seekTo_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

MediaPlayer::MediaPlayer(QObject* parent) : QObject(parent) {
  qRegisterMetaType<MediaFrame>("sapiens::studio::MediaFrame");
}

MediaPlayer::~MediaPlayer() {
  worker_.reset();
  retired_.clear();
}

void MediaPlayer::open(const QString& pathOrDevice, const CameraOptions& camera) {
  retireWorker();
  name_ = pathOrDevice;
  info_ = {};
  position_ = -1;
  setPlaying(false);
  worker_ = std::make_unique<Worker>(this, generation_, pathOrDevice.toStdString(), camera, looping_);
}

void MediaPlayer::close() {
  retireWorker();
  name_.clear();
  info_ = {};
  position_ = -1;
  setPlaying(false);
}

void MediaPlayer::retireWorker() {
  ++generation_;  // whatever the old worker still posts is dropped
  if (worker_) {
    worker_->requestQuit();
    retired_.push_back(std::move(worker_));
  }
  // Those that have stopped are joined at once; one still in a camera read is left to finish.
  retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                [](const std::unique_ptr<Worker>& worker) { return worker->finished(); }),
                 retired_.end());
}

void MediaPlayer::setPlaying(bool playing) {
  if (playing_ == playing) return;
  playing_ = playing;
  Q_EMIT playingChanged(playing);
}

void MediaPlayer::play() {
  if (!worker_) return;
  if (!info_.live && info_.frameCount > 0 && position_ >= info_.frameCount - 1 && !looping_) seek(0);
  worker_->setPlaying(true);
  setPlaying(true);
}

void MediaPlayer::pause() {
  if (!worker_) return;
  worker_->setPlaying(false);
  setPlaying(false);
}

void MediaPlayer::setLooping(bool looping) {
  looping_ = looping;
  if (worker_) worker_->setLooping(looping);
}

void MediaPlayer::seek(std::int64_t index) {
  if (!worker_ || info_.live) return;
  worker_->seek(index);
}

void MediaPlayer::step(int delta) {
  if (!worker_ || info_.live) return;
  pause();
  seek(std::max<std::int64_t>(0, position_ + delta));
}

void MediaPlayer::frameDone() {
  if (worker_) worker_->frameDone();
}

}  // namespace sapiens::studio
