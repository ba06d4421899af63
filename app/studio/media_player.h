#pragma once
// Plays a video file or a camera for the window. Opening, decoding and seeking run on a thread of the
// player's own; frames arrive on the GUI thread as signals, and nothing here waits for that thread except
// the destructor. During playback the next frame is read only once the window has presented the last
// one (frameDone): a slow model slows playback down instead of piling frames up. Files play at most at
// their own rate; a camera hands over its newest frame, the ones in between are dropped.

#include "sapiens/media/camera_source.h"
#include "sapiens/media/frame_source.h"

#include <opencv2/core/mat.hpp>

#include <QMetaType>
#include <QObject>
#include <QString>

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

namespace sapiens::studio {

struct MediaFrame {
  cv::Mat bgr;  ///< CV_8UC3, upright
  std::int64_t index = 0;
  double timestampSeconds = 0;
  std::chrono::steady_clock::time_point readAt;  ///< when the source handed it over, for latency
};

class MediaPlayer : public QObject {
  Q_OBJECT

 public:
  explicit MediaPlayer(QObject* parent = nullptr);
  /// Stops the reading thread and waits for it (a camera read ends within its time-out).
  ~MediaPlayer() override;

  /// Opens a video file, a camera (/dev/videoN, with `camera`'s size and rate) or a synthetic camera
  /// ("synthetic:WxH@FPS") in the background, closing what was open. `opened` or `failed` follows, then
  /// the first frame; cameras start playing at once.
  void open(const QString& pathOrDevice, const CameraOptions& camera = {});
  void close();
  bool isOpen() const { return worker_ != nullptr; }
  /// What the source said about itself; valid once `opened` came.
  const SourceInfo& info() const { return info_; }
  QString name() const { return name_; }

  void play();
  void pause();
  void togglePlaying() { playing_ ? pause() : play(); }
  bool isPlaying() const { return playing_; }
  /// At the end of a file, playback goes on from the first frame.
  void setLooping(bool looping);
  bool isLooping() const { return looping_; }
  /// Shows frame `index` of a file (clamped to the file); the newest request wins while earlier ones are
  /// still being decoded. Playback goes on from there.
  void seek(std::int64_t index);
  /// Pauses and shows the frame `delta` frames away from the one on display.
  void step(int delta);
  /// The window has presented the last frame of playback: the next one may come.
  void frameDone();
  /// The index of the last frame delivered.
  std::int64_t position() const { return position_; }

 Q_SIGNALS:
  void opened(const QString& name);
  void failed(const QString& name, const QString& reason);
  /// `playing`: part of playback, answer with frameDone(); otherwise the answer to a seek, step or open.
  void frameReady(const sapiens::studio::MediaFrame& frame, bool playing);
  void playingChanged(bool playing);
  /// Playback reached the end of a file (not looping).
  void ended();

 private:
  class Worker;
  void retireWorker();
  void setPlaying(bool playing);

  std::unique_ptr<Worker> worker_;
  std::vector<std::unique_ptr<Worker>> retired_;  // stopping; joined when finished or in the destructor
  quint64 generation_ = 0;                        // drops what an older worker still posts
  SourceInfo info_;
  QString name_;
  bool playing_ = false;
  bool looping_ = false;
  std::int64_t position_ = -1;
};

}  // namespace sapiens::studio

Q_DECLARE_METATYPE(sapiens::studio::MediaFrame)
