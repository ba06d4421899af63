#pragma once
// Encodes BGR frames into a video file with libavcodec/libavformat: H.264 (libx264) when this FFmpeg
// has it, else MPEG-4 Part 2 (mpeg4); the container follows the file name (.mp4, .mkv, .mov, ...).
// Frames keep the timestamps they are given, so an annotated video plays in step with its input.
// The file appears only on finish(): until then frames go to a temporary file beside it.

#include "sapiens/media/frame_source.h"

#include <cstdint>
#include <memory>
#include <string>

namespace sapiens {

struct VideoWriterOptions {
  int width = 0;  ///< of every frame; odd sizes are padded by one replicated pixel (4:2:0 needs even)
  int height = 0;
  double fps = 25;           ///< nominal rate stored in the file
  TimeBase timeBase{0, 0};   ///< tick the timestamps are rounded to, e.g. the input's SourceInfo::timeBase;
                             ///< {0, 0}: 1 / fps
  int keyframeInterval = 0;  ///< frames between keyframes; 0: about two seconds' worth
  int quality = 20;          ///< x264 CRF (0 lossless .. 51); mapped to a quantiser for mpeg4
  std::string encoder;       ///< an FFmpeg encoder name to force; empty: libx264, else mpeg4
  std::string comment;       ///< the container's "comment" tag when set (e.g. untrained demo weights)
};

/// Options for a video of `width` x `height` frames made from `source`'s: its rate (25 when unknown) and,
/// for a file, its time base, so that the input's timestamps are kept exactly; a camera's are rounded to
/// 1 / fps.
VideoWriterOptions videoWriterOptionsFor(const SourceInfo& source, int width, int height);

class VideoWriter {
 public:
  /// Opens the encoder and the temporary file. Throws MediaError naming `path`: unknown container,
  /// no encoder, folder not writable.
  VideoWriter(const std::string& path, const VideoWriterOptions& options);
  /// Without finish() (cancel, error) the temporary file is removed and `path` is left untouched.
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Encodes a CV_8UC3 frame of the configured size shown at `timestampSeconds`. Timestamps must
  /// increase by at least one tick. Throws MediaError naming the file (disk full, bad frame).
  void write(const cv::Mat& bgr, double timestampSeconds);
  void write(const Frame& frame) { write(frame.bgr, frame.timestampSeconds); }

  /// Flushes the encoder, writes the index and renames the file into place. Throws MediaError.
  void finish();

  /// "libx264" or "mpeg4" (or the forced one).
  const std::string& encoderName() const;
  std::int64_t framesWritten() const;
  const std::string& path() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sapiens
