#pragma once
// Video files through libavformat/libavcodec: any container and codec Debian's FFmpeg decodes, every
// pixel format converted to BGR with libswscale, pts timestamps (variable frame rate kept), rotation
// metadata applied, and frame-accurate seeking.

#include "sapiens/media/frame_source.h"

#include <memory>
#include <string>

namespace sapiens {

class VideoFileSource : public FrameSource {
 public:
  /// Opens the file and its best video stream. Throws MediaError naming the file: missing, not a
  /// video, no decoder for its codec.
  explicit VideoFileSource(const std::string& path);
  ~VideoFileSource() override;

  const SourceInfo& info() const override;
  /// Frames in presentation order. A truncated or corrupt file ends with a MediaError naming the file
  /// and the index of the frame that could not be read.
  std::optional<Frame> next() override;
  bool seekable() const override { return true; }
  /// Seeks to the keyframe before frame `frameIndex` and decodes forward to it. The first seek scans the
  /// file's packets (no decoding) to learn every frame's timestamp, so it works for variable frame rates.
  void seek(std::int64_t frameIndex) override;
  void close() override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sapiens
