#pragma once
// RAII owners for the FFmpeg objects media/ uses, and FFmpeg error codes as text. Private to media/.

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/frame.h>
#include <libswscale/swscale.h>
}

#include <memory>
#include <new>
#include <string>

namespace sapiens::media_detail {

struct InputContextDeleter {
  void operator()(AVFormatContext* context) const { avformat_close_input(&context); }
};
struct OutputContextDeleter {
  void operator()(AVFormatContext* context) const {
    if (context && context->pb && !(context->oformat->flags & AVFMT_NOFILE)) avio_closep(&context->pb);
    avformat_free_context(context);
  }
};
struct CodecContextDeleter {
  void operator()(AVCodecContext* context) const { avcodec_free_context(&context); }
};
struct FrameDeleter {
  void operator()(AVFrame* frame) const { av_frame_free(&frame); }
};
struct PacketDeleter {
  void operator()(AVPacket* packet) const { av_packet_free(&packet); }
};
struct ScaleContextDeleter {
  void operator()(SwsContext* context) const { sws_freeContext(context); }
};

using InputContext = std::unique_ptr<AVFormatContext, InputContextDeleter>;
using OutputContext = std::unique_ptr<AVFormatContext, OutputContextDeleter>;
using CodecContext = std::unique_ptr<AVCodecContext, CodecContextDeleter>;
using FramePtr = std::unique_ptr<AVFrame, FrameDeleter>;
using PacketPtr = std::unique_ptr<AVPacket, PacketDeleter>;
using ScaleContext = std::unique_ptr<SwsContext, ScaleContextDeleter>;

/// av_strerror's text for an FFmpeg error code.
inline std::string errorText(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

/// For MP4/MOV output: track and movie timescales that represent `timeBase` exactly. By default the movie
/// timescale is 1/1000 s, and the edit list that places a video not starting at 0 (a later shard of a long
/// video) would round its start to the millisecond. Adds the muxer options to `settings`; other
/// containers are left alone.
void requestExactMp4Timescale(AVDictionary** settings, const AVOutputFormat* container, AVRational timeBase);

/// Sends FFmpeg's own log lines (warnings and errors about damaged data, mostly) to sapiens::logger() at
/// debug level instead of stderr: the errors that matter reach the caller as MediaError. Idempotent.
void routeFfmpegLogs();

/// While alive, remembers the first error FFmpeg logs on this thread. Some demuxers (Matroska) report a
/// file that ends in the middle of a frame only in their log and then return a plain end of file.
class FfmpegErrorCapture {
 public:
  FfmpegErrorCapture();
  ~FfmpegErrorCapture();
  FfmpegErrorCapture(const FfmpegErrorCapture&) = delete;
  FfmpegErrorCapture& operator=(const FfmpegErrorCapture&) = delete;

  /// The message, without FFmpeg's "[component @ address]" prefix; empty when none was logged.
  const std::string& firstError() const { return firstError_; }
  void record(const std::string& message) {
    if (firstError_.empty()) firstError_ = message;
  }

 private:
  std::string firstError_;
  FfmpegErrorCapture* previous_ = nullptr;
};

/// Allocations that only fail when memory is exhausted.
inline FramePtr allocateFrame() {
  FramePtr frame(av_frame_alloc());
  if (!frame) throw std::bad_alloc();
  return frame;
}
inline PacketPtr allocatePacket() {
  PacketPtr packet(av_packet_alloc());
  if (!packet) throw std::bad_alloc();
  return packet;
}

}  // namespace sapiens::media_detail
