#include "sapiens/media/video_writer.h"

#include "media/ffmpeg_handles.h"
#include "media/file_placement.h"
#include "sapiens/common/log.h"

extern "C" {
#include <libavutil/opt.h>
}

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sapiens {

using namespace media_detail;

struct VideoWriter::State {
  std::string path;
  std::string tempPath;
  VideoWriterOptions options;
  std::string encoderName;
  OutputContext muxer;
  CodecContext encoder;
  AVStream* stream = nullptr;
  FramePtr picture = allocateFrame();
  PacketPtr packet = allocatePacket();
  ScaleContext scaler;
  int codedWidth = 0;
  int codedHeight = 0;
  std::int64_t lastPts = AV_NOPTS_VALUE;
  std::int64_t written = 0;
  bool headerWritten = false;
  bool finished = false;

  // The steps of opening the file (VideoWriter's constructor), in this order.
  void openEncoder(const AVCodec* codec, const AVOutputFormat* container, AVRational timeBase);
  void openMuxer(const AVOutputFormat* container, AVRational timeBase);
  void allocatePicture();

  MediaError error(const std::string& what, int code) const {
    return MediaError(path, what + " (" + errorText(code) + ")");
  }

  void drain() {
    for (;;) {
      int result = avcodec_receive_packet(encoder.get(), packet.get());
      if (result == AVERROR(EAGAIN) || result == AVERROR_EOF) return;
      if (result < 0) throw error("cannot encode", result);
      av_packet_rescale_ts(packet.get(), encoder->time_base, stream->time_base);
      packet->stream_index = stream->index;
      result = av_interleaved_write_frame(muxer.get(), packet.get());
      if (result < 0) throw error("cannot write", result);
      if (muxer->pb && muxer->pb->error < 0) throw error("cannot write", muxer->pb->error);
    }
  }

  void removeTemporary() {
    muxer.reset();
    if (!tempPath.empty()) {
      std::error_code ec;
      std::filesystem::remove(tempPath, ec);
    }
  }
};

VideoWriterOptions videoWriterOptionsFor(const SourceInfo& source, int width, int height) {
  VideoWriterOptions options;
  options.width = width;
  options.height = height;
  options.fps = source.fps > 0 ? source.fps : 25;
  if (!source.live) options.timeBase = source.timeBase;
  return options;
}

namespace {

// The encoder asked for, else libx264, else MPEG-4 Part 2.
const AVCodec* chooseEncoder(const std::string& path, const VideoWriterOptions& options) {
  if (!options.encoder.empty()) {
    const AVCodec* codec = avcodec_find_encoder_by_name(options.encoder.c_str());
    if (!codec) throw MediaError(path, "this FFmpeg has no encoder " + options.encoder);
    return codec;
  }
  if (const AVCodec* codec = avcodec_find_encoder_by_name("libx264")) return codec;
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
  if (!codec) throw MediaError(path, "this FFmpeg has neither an H.264 nor an MPEG-4 encoder");
  logger().warn("{}: no H.264 encoder in this FFmpeg; writing MPEG-4 Part 2 instead", path);
  return codec;
}

AVRational chooseTimeBase(const std::string& path, const VideoWriterOptions& options, const AVCodec* codec) {
  AVRational timeBase{options.timeBase.numerator, options.timeBase.denominator};
  if (timeBase.num <= 0 || timeBase.den <= 0) timeBase = av_inv_q(av_d2q(options.fps, 1001000));
  if (codec->id == AV_CODEC_ID_MPEG4 && timeBase.den > 65535) {  // the standard's limit
    const AVRational exact = timeBase;
    av_reduce(&timeBase.num, &timeBase.den, exact.num, exact.den, 65535);
    logger().warn("{}: MPEG-4 cannot use the time base {}/{}; timestamps rounded to {}/{}", path, exact.num,
                  exact.den, timeBase.num, timeBase.den);
  }
  return timeBase;
}

// Size, colour, rate, keyframes and quality; the encoder's own settings for avcodec_open2 in `settings`.
void configureEncoder(AVCodecContext& e, const VideoWriterOptions& options, const std::string& encoderName,
                      AVRational timeBase, AVDictionary** settings) {
  e.sample_aspect_ratio = {1, 1};
  e.pix_fmt = AV_PIX_FMT_YUV420P;
  e.time_base = timeBase;
  e.framerate = av_d2q(options.fps, 1001000);
  e.gop_size = options.keyframeInterval > 0 ? options.keyframeInterval
                                            : std::max(1, static_cast<int>(std::lround(2 * options.fps)));
  e.color_range = AVCOL_RANGE_MPEG;  // what swscale's default BGR -> YUV conversion produces
  e.colorspace = AVCOL_SPC_SMPTE170M;
  e.color_primaries = AVCOL_PRI_BT709;
  e.color_trc = AVCOL_TRC_BT709;
  e.thread_count = 0;
  // No B-frames: decoding order is presentation order, so the videos of consecutive frame ranges (the
  // shards of one long video) join into one by copying their packets (concatenateVideos).
  e.max_b_frames = 0;
  if (encoderName == "libx264") {
    av_dict_set(settings, "preset", "veryfast", 0);
    av_dict_set_int(settings, "crf", std::clamp(options.quality, 0, 51), 0);
  } else {
    // CRF 20 ~ q 3; each 6 CRF steps double the quantiser.
    const double q = std::clamp(3.0 * std::pow(2.0, (options.quality - 20) / 6.0), 1.0, 31.0);
    e.flags |= AV_CODEC_FLAG_QSCALE;
    e.global_quality = static_cast<int>(std::lround(FF_QP2LAMBDA * q));
  }
}

}  // namespace

void VideoWriter::State::openEncoder(const AVCodec* codec, const AVOutputFormat* container,
                                     AVRational timeBase) {
  State& s = *this;
  AVFormatContext* raw = nullptr;
  int result = avformat_alloc_output_context2(&raw, container, nullptr, s.tempPath.c_str());
  if (result < 0 || !raw) throw s.error("cannot set up the container", result);
  s.muxer.reset(raw);
  s.stream = avformat_new_stream(s.muxer.get(), nullptr);
  if (!s.stream) throw std::bad_alloc();
  s.encoder.reset(avcodec_alloc_context3(codec));
  if (!s.encoder) throw std::bad_alloc();
  s.encoder->width = s.codedWidth;
  s.encoder->height = s.codedHeight;
  if (s.muxer->oformat->flags & AVFMT_GLOBALHEADER) s.encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  AVDictionary* settings = nullptr;
  configureEncoder(*s.encoder, s.options, s.encoderName, timeBase, &settings);
  result = avcodec_open2(s.encoder.get(), codec, &settings);
  av_dict_free(&settings);
  if (result < 0) throw s.error(std::string("cannot open the ") + s.encoderName + " encoder", result);
  result = avcodec_parameters_from_context(s.stream->codecpar, s.encoder.get());
  if (result < 0) throw s.error("cannot set up the stream", result);
  s.stream->time_base = s.encoder->time_base;
  s.stream->avg_frame_rate = s.encoder->framerate;
}

void VideoWriter::State::openMuxer(const AVOutputFormat* container, AVRational timeBase) {
  State& s = *this;
  if (!(s.muxer->oformat->flags & AVFMT_NOFILE)) {
    const int result = avio_open(&s.muxer->pb, s.tempPath.c_str(), AVIO_FLAG_WRITE);
    if (result < 0) throw s.error("cannot open for writing", result);
  }
  if (!s.options.comment.empty()) av_dict_set(&s.muxer->metadata, "comment", s.options.comment.c_str(), 0);
  AVDictionary* muxerSettings = nullptr;
  // The index goes to the front: players start at once, and a cut-off copy still plays up to the cut.
  if (std::strcmp(container->name, "mp4") == 0 || std::strcmp(container->name, "mov") == 0)
    av_dict_set(&muxerSettings, "movflags", "+faststart", 0);
  requestExactMp4Timescale(&muxerSettings, container, timeBase);
  const int result = avformat_write_header(s.muxer.get(), &muxerSettings);
  av_dict_free(&muxerSettings);
  if (result < 0) throw s.error("cannot write the header", result);
  s.headerWritten = true;
}

void VideoWriter::State::allocatePicture() {
  State& s = *this;
  s.picture->format = AV_PIX_FMT_YUV420P;
  s.picture->width = s.codedWidth;
  s.picture->height = s.codedHeight;
  const int result = av_frame_get_buffer(s.picture.get(), 0);
  if (result < 0) throw s.error("cannot allocate a frame", result);
  s.scaler.reset(sws_getContext(s.codedWidth, s.codedHeight, AV_PIX_FMT_BGR24, s.codedWidth, s.codedHeight,
                                AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND, nullptr, nullptr,
                                nullptr));
  if (!s.scaler) throw MediaError(s.path, "cannot set up the colour conversion");
}

VideoWriter::VideoWriter(const std::string& path, const VideoWriterOptions& options)
    : state_(std::make_unique<State>()) {
  routeFfmpegLogs();
  State& s = *state_;
  s.path = path;
  s.options = options;
  if (options.width < 2 || options.height < 2) throw MediaError(path, "video size must be at least 2x2");
  if (!(options.fps > 0)) throw MediaError(path, "frame rate must be positive");
  s.codedWidth = options.width + (options.width & 1);
  s.codedHeight = options.height + (options.height & 1);
  const AVOutputFormat* container = av_guess_format(nullptr, path.c_str(), nullptr);
  if (!container) throw MediaError(path, "no container format for this file name (use .mp4, .mkv, .mov)");
  const AVCodec* codec = chooseEncoder(path, options);
  s.encoderName = codec->name;
  const AVRational timeBase = chooseTimeBase(path, options, codec);
  s.tempPath = createTemporaryBeside(path);
  try {
    s.openEncoder(codec, container, timeBase);
    s.openMuxer(container, timeBase);
    s.allocatePicture();
  } catch (...) {
    s.encoder.reset();
    s.removeTemporary();
    throw;
  }
  logger().info("{}: encoding {}x{} at {:.3f} fps with {} (time base {}/{})", path, options.width,
                options.height, options.fps, s.encoderName, timeBase.num, timeBase.den);
}

VideoWriter::~VideoWriter() {
  State& s = *state_;
  if (s.finished) return;
  s.encoder.reset();
  s.removeTemporary();
  if (s.written > 0) logger().info("{}: not finished; {} frames discarded", s.path, s.written);
}

void VideoWriter::write(const cv::Mat& bgr, double timestampSeconds) {
  State& s = *state_;
  if (s.finished) throw MediaError(s.path, "write after finish");
  if (bgr.type() != CV_8UC3 || bgr.cols != s.options.width || bgr.rows != s.options.height)
    throw MediaError(s.path, "frame " + std::to_string(s.written) + " is " + std::to_string(bgr.cols) + "x" +
                                 std::to_string(bgr.rows) + " (type " + std::to_string(bgr.type()) +
                                 "), not " + std::to_string(s.options.width) + "x" +
                                 std::to_string(s.options.height) + " BGR");
  const AVRational tb = s.encoder->time_base;
  const auto pts = static_cast<std::int64_t>(std::llround(timestampSeconds * tb.den / tb.num));
  if (s.lastPts != AV_NOPTS_VALUE && pts <= s.lastPts)
    throw MediaError(s.path, "frame " + std::to_string(s.written) + " at " +
                                 std::to_string(timestampSeconds) +
                                 " s does not come after the previous frame");

  cv::Mat source = bgr;
  if (s.codedWidth != bgr.cols || s.codedHeight != bgr.rows)
    cv::copyMakeBorder(bgr, source, 0, s.codedHeight - bgr.rows, 0, s.codedWidth - bgr.cols,
                       cv::BORDER_REPLICATE);
  if (!source.isContinuous()) source = source.clone();
  int result = av_frame_make_writable(s.picture.get());
  if (result < 0) throw s.error("cannot allocate a frame", result);
  const uint8_t* planes[4] = {source.data, nullptr, nullptr, nullptr};
  const int strides[4] = {static_cast<int>(source.step), 0, 0, 0};
  sws_scale(s.scaler.get(), planes, strides, 0, s.codedHeight, s.picture->data, s.picture->linesize);
  s.picture->pts = pts;
  result = avcodec_send_frame(s.encoder.get(), s.picture.get());
  if (result < 0) throw s.error("cannot encode frame " + std::to_string(s.written), result);
  s.drain();
  s.lastPts = pts;
  ++s.written;
}

void VideoWriter::finish() {
  State& s = *state_;
  if (s.finished) return;
  int result = avcodec_send_frame(s.encoder.get(), nullptr);
  if (result < 0) throw s.error("cannot flush the encoder", result);
  s.drain();
  result = av_write_trailer(s.muxer.get());
  if (result < 0) throw s.error("cannot write the index", result);
  if (s.muxer->pb) {
    avio_flush(s.muxer->pb);
    const int pending = s.muxer->pb->error;
    result = avio_closep(&s.muxer->pb);
    if (pending < 0) throw s.error("cannot write", pending);
    if (result < 0) throw s.error("cannot close", result);
  }
  placeFinishedFile(s.tempPath, s.path);
  s.finished = true;
  s.tempPath.clear();
  logger().info("{}: {} frames written with {}", s.path, s.written, s.encoderName);
}

const std::string& VideoWriter::encoderName() const {
  return state_->encoderName;
}
std::int64_t VideoWriter::framesWritten() const {
  return state_->written;
}
const std::string& VideoWriter::path() const {
  return state_->path;
}

}  // namespace sapiens
