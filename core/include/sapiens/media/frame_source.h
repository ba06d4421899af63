#pragma once
// One interface for everything that yields pictures in order: a still image, a folder of images, a video
// file, a camera, and the synthetic camera of the tests. Frames are CV_8UC3 BGR, upright.

#include "sapiens/media/media_error.h"

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace sapiens {

/// A time base as a fraction of a second (FFmpeg's AVRational without FFmpeg in the header).
struct TimeBase {
  int numerator = 1;
  int denominator = 25;
};

struct Frame {
  cv::Mat bgr;                  ///< CV_8UC3, upright (rotation metadata applied)
  std::int64_t index = 0;       ///< 0-based position in the source; live sources count dropped frames too
  double timestampSeconds = 0;  ///< presentation time from the source's start (pts-based for videos)
};

struct SourceInfo {
  std::string name;  ///< the path or device it was opened from
  int width = 0;     ///< of the frames handed out (after rotation); 0 when frames differ
  int height = 0;
  double fps = 0;                ///< nominal (average) rate; frames may still come at a variable rate
  TimeBase timeBase;             ///< the stream's own tick; timestamps are exact multiples of it
  std::int64_t frameCount = -1;  ///< -1 when unknown (live); estimated from the duration when a
                                 ///< container does not store it
  double durationSeconds = 0;    ///< 0 when unknown
  bool live = false;             ///< a camera: frames come in real time and are dropped when not pulled
  int rotationDegrees = 0;       ///< clockwise rotation applied to decoded pictures (0, 90, 180, 270)
  std::string codec;             ///< "h264", "image", "v4l2 YUYV", ... for logs and the GUI
};

class FrameSource {
 public:
  virtual ~FrameSource() = default;
  FrameSource() = default;
  FrameSource(const FrameSource&) = delete;
  FrameSource& operator=(const FrameSource&) = delete;

  virtual const SourceInfo& info() const = 0;

  /// The next frame, or nullopt at the end. Throws MediaError naming the file (and, for videos, the
  /// frame index reached) on a read error; the frames before it were delivered.
  virtual std::optional<Frame> next() = 0;

  /// Whether seek() works (files: yes; live sources: no).
  virtual bool seekable() const { return false; }
  /// Makes the next call to next() return frame `frameIndex` exactly. Throws MediaError when not seekable
  /// or out of range.
  virtual void seek(std::int64_t frameIndex);

  /// Releases the file or device early; next() then returns nullopt. The destructor closes too.
  virtual void close() {}
};

/// Opens whatever `pathOrDevice` names: "/dev/videoN" (a V4L2 camera), "synthetic:WxH@FPS" (a test-pattern
/// camera), a folder (its images), a file with an image extension (one frame), anything else as a video file.
/// Throws MediaError naming it.
std::unique_ptr<FrameSource> openFrameSource(const std::string& pathOrDevice);

}  // namespace sapiens
