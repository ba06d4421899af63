#include "sapiens/media/video_file_source.h"

#include "media/ffmpeg_handles.h"
#include "sapiens/common/log.h"

extern "C" {
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
}

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <type_traits>
#include <vector>

namespace sapiens {

using namespace media_detail;

namespace {

// Clockwise degrees that make the picture upright, from the stream's display matrix (as ffmpeg's
// autorotate reads it). Only multiples of 90 are applied.
int displayRotation(const AVStream* stream, const std::string& path) {
  size_t size = 0;
  const uint8_t* matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
  if (!matrix || size < 9 * sizeof(int32_t)) return 0;
  double theta = -av_display_rotation_get(reinterpret_cast<const int32_t*>(matrix));
  if (std::isnan(theta)) return 0;
  theta -= 360 * std::floor(theta / 360 + 0.9 / 360);
  const int degrees = static_cast<int>(std::lround(theta / 90.0)) * 90 % 360;
  if (std::abs(theta - degrees) > 1 && std::abs(theta - 360 - degrees) > 1) {
    logger().warn("{}: rotation of {:.1f} degrees is not a multiple of 90; frames are not rotated", path,
                  theta);
    return 0;
  }
  return degrees;
}

// The number an enum field of a decoded frame holds. A damaged file can put any value there (colour space
// 128 was seen), and reading an enum object that holds no enumerator's value is undefined behaviour.
template <typename Enum>
int rawValue(const Enum& field) {
  std::underlying_type_t<Enum> value;
  std::memcpy(&value, &field, sizeof value);
  return static_cast<int>(value);
}

int swsColorspace(int space) {
  switch (space) {
    case AVCOL_SPC_BT709:
      return SWS_CS_ITU709;
    case AVCOL_SPC_FCC:
      return SWS_CS_FCC;
    case AVCOL_SPC_SMPTE240M:
      return SWS_CS_SMPTE240M;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL:
      return SWS_CS_BT2020;
    default:
      return SWS_CS_ITU601;
  }
}

}  // namespace

struct VideoFileSource::State {
  std::string path;
  SourceInfo info;
  InputContext format;
  CodecContext decoder;
  AVStream* stream = nullptr;
  int streamIndex = -1;
  FramePtr decoded = allocateFrame();
  PacketPtr packet = allocatePacket();
  PacketPtr heldPacket = allocatePacket();  // a packet flagged corrupt, until we know whether more follow
  ScaleContext scaler;
  bool demuxEnded = false;
  bool lastPacketCorrupt = false;       // heldPacket holds a packet the demuxer flagged corrupt
  std::string failure;                  // why the input ended early; raised once the decoder is drained
  int codedWidth = 0, codedHeight = 0;  // the stream's declared picture size, before rotation
  bool sizeChangeLogged = false;
  std::int64_t ptsOffset = 0;  // added to the times of frames after a jump back (continueTimestamps)
  bool timestampJumpLogged = false;
  bool closed = false;
  std::int64_t startPts = 0;
  std::int64_t frameTicks = 1;  // nominal frame duration in stream ticks, for frames without a timestamp
  std::int64_t lastPts = AV_NOPTS_VALUE;
  std::int64_t nextIndex = 0;           // index the next decoded frame gets when there is no pts table
  std::int64_t storedFrames = 0;        // frame count written in the container, 0 when absent
  bool seeked = false;                  // framePts scanned, or known to be unusable (countFramesToSeek)
  std::vector<std::int64_t> framePts;   // every frame's pts in presentation order, after the first seek
  bool framePtsComplete = false;        // all packets had timestamps; otherwise seeks decode from the start
  std::optional<MediaError> readError;  // raised again by next() until a seek
  std::optional<Frame> pending;         // the frame a seek decoded, handed out by the next next()

  MediaError error(const std::string& what, int code) const {
    return MediaError(path, what + " (" + errorText(code) + ")");
  }

  double seconds(std::int64_t pts) const {
    return static_cast<double>(pts - startPts) * av_q2d(stream->time_base);
  }

  // The next decoded picture into `decoded`, with its pts; false at the end of the stream. A read or
  // decode error first drains what the decoder holds (with frame threads, several good frames), then
  // throws.
  bool decodeOne(std::int64_t& pts) {
    for (;;) {
      int result = avcodec_receive_frame(decoder.get(), decoded.get());
      if (result == 0 && ((decoded->flags & AV_FRAME_FLAG_CORRUPT) || decoded->decode_error_flags != 0)) {
        // The decoder patched over damaged data (e.g. repeated a block of the previous picture): the
        // picture is not what the file holds, and the ones that refer to it would not be either.
        av_frame_unref(decoded.get());
        throw MediaError(path, "corrupt data at frame " + std::to_string(nextIndex));
      }
      if (result == 0) {
        pts = decoded->best_effort_timestamp;
        if (pts == AV_NOPTS_VALUE) {
          pts = lastPts == AV_NOPTS_VALUE ? startPts : lastPts + frameTicks;
        } else {
          pts += ptsOffset;
          if (lastPts != AV_NOPTS_VALUE && pts <= lastPts) pts = continueTimestamps(pts);
        }
        lastPts = pts;
        return true;
      }
      if (result == AVERROR_EOF || (result == AVERROR(EAGAIN) && demuxEnded)) {
        if (!failure.empty()) throw MediaError(path, failure + " at frame " + std::to_string(nextIndex));
        return false;
      }
      if (result != AVERROR(EAGAIN)) {
        if (!failure.empty()) throw MediaError(path, failure + " at frame " + std::to_string(nextIndex));
        throw error("cannot decode frame " + std::to_string(nextIndex), result);
      }
      FfmpegErrorCapture demuxerErrors;
      result = av_read_frame(format.get(), packet.get());
      if (result == AVERROR_EOF && format->pb && format->pb->error < 0) result = format->pb->error;
      if (result == AVERROR_EOF) {
        const std::string& logged = demuxerErrors.firstError();
        if (!logged.empty())
          endInput("truncated or corrupt (" + logged + ")");
        else
          endInput(lastPacketCorrupt ? "truncated or corrupt" : "");  // the held packet is the cut one
        av_packet_unref(heldPacket.get());
        continue;
      }
      if (result < 0) {
        endInput("truncated or corrupt (" + errorText(result) + ")");
        continue;
      }
      if (packet->stream_index != streamIndex) {
        av_packet_unref(packet.get());
        continue;
      }
      // A packet the demuxer flags corrupt is a cut at the end of the file when nothing follows it: it is
      // held back until the next packet shows otherwise. Inside the file it is often whole (MPEG-TS flags
      // a jump in its continuity counters, as where two streams were joined, typically at a change of
      // frame size): the decoder then gets it, and its own checks (the corrupt-frame test above) catch
      // real damage.
      if (lastPacketCorrupt) {
        lastPacketCorrupt = false;
        result = avcodec_send_packet(decoder.get(), heldPacket.get());
        av_packet_unref(heldPacket.get());
        if (result < 0 && result != AVERROR(EAGAIN)) {
          av_packet_unref(packet.get());
          endInput("corrupt data (" + errorText(result) + ")");
          continue;
        }
      }
      if (packet->flags & AV_PKT_FLAG_CORRUPT) {
        av_packet_move_ref(heldPacket.get(), packet.get());
        lastPacketCorrupt = true;
        continue;
      }
      result = avcodec_send_packet(decoder.get(), packet.get());
      av_packet_unref(packet.get());
      if (result < 0 && result != AVERROR(EAGAIN)) endInput("corrupt data (" + errorText(result) + ")");
    }
  }

  // A presentation time at or before the last one: streams joined end to end, each from its own zero. The
  // rest of the file is moved on to follow the last frame, and frame numbers are counted from here on
  // (the packets' times no longer say where a frame stands).
  std::int64_t continueTimestamps(std::int64_t pts) {
    if (!timestampJumpLogged) {
      logger().warn(
          "{}: the timestamps go back at frame {}; the frames from there on are timed after the one "
          "before",
          path, nextIndex);
      timestampJumpLogged = true;
    }
    const std::int64_t shift = lastPts + frameTicks - pts;
    ptsOffset += shift;
    countFramesToSeek("the timestamps go back");
    return pts + shift;
  }

  // The packets' times cannot number the frames as reading does: from now on a seek counts frames from the
  // start (and no table is scanned).
  void countFramesToSeek(const char* why) {
    framePts.clear();
    framePtsComplete = false;
    seeked = true;
    logger().debug("{}: {}; seeking decodes from the start", path, why);
  }

  // No more packets: the decoder is told to hand out what it holds. `why` is the error to raise after.
  void endInput(const std::string& why = {}) {
    demuxEnded = true;
    failure = why;
    avcodec_send_packet(decoder.get(), nullptr);
  }

  std::int64_t indexOf(std::int64_t pts) const {
    if (framePts.empty()) return nextIndex;
    return std::lower_bound(framePts.begin(), framePts.end(), pts) - framePts.begin();
  }

  cv::Mat toBgr() {
    const int width = decoded->width;
    const int height = decoded->height;
    const auto pixelFormat = static_cast<AVPixelFormat>(decoded->format);
    // Same size in and out: the flags only choose the conversion path. Bilinear takes swscale's SIMD
    // YUV -> BGR path (as fast as ffmpeg itself); the accurate-rounding path cost 3x the CPU time.
    scaler.reset(sws_getCachedContext(scaler.release(), width, height, pixelFormat, width, height,
                                      AV_PIX_FMT_BGR24, SWS_BILINEAR, nullptr, nullptr, nullptr));
    if (!scaler) {
      const char* name = av_get_pix_fmt_name(pixelFormat);
      throw MediaError(path, std::string("cannot convert pixel format ") + (name ? name : "?") + " to BGR");
    }
    const bool fullRange = rawValue(decoded->color_range) == AVCOL_RANGE_JPEG ||
                           pixelFormat == AV_PIX_FMT_YUVJ420P || pixelFormat == AV_PIX_FMT_YUVJ422P ||
                           pixelFormat == AV_PIX_FMT_YUVJ444P;
    const int* coefficients = sws_getCoefficients(swsColorspace(rawValue(decoded->colorspace)));
    sws_setColorspaceDetails(scaler.get(), coefficients, fullRange ? 1 : 0, coefficients, 1, 0, 1 << 16,
                             1 << 16);
    cv::Mat bgr(height, width, CV_8UC3);
    uint8_t* planes[4] = {bgr.data, nullptr, nullptr, nullptr};
    int strides[4] = {static_cast<int>(bgr.step), 0, 0, 0};
    sws_scale(scaler.get(), decoded->data, decoded->linesize, 0, height, planes, strides);
    if (width != codedWidth || height != codedHeight) bgr = toStreamSize(bgr);
    switch (info.rotationDegrees) {
      case 90:
        cv::rotate(bgr, bgr, cv::ROTATE_90_CLOCKWISE);
        break;
      case 180:
        cv::rotate(bgr, bgr, cv::ROTATE_180);
        break;
      case 270:
        cv::rotate(bgr, bgr, cv::ROTATE_90_COUNTERCLOCKWISE);
        break;
      default:
        break;
    }
    return bgr;
  }

  // A picture of another size than the stream declared (the size changed mid-stream), rescaled to it:
  // everything downstream (overlays, the annotated video, the tracker's boxes) sees one frame size.
  cv::Mat toStreamSize(const cv::Mat& bgr) {
    if (!sizeChangeLogged) {
      logger().warn(
          "{}: the frame size changes from {}x{} to {}x{} at frame {}; such frames are rescaled to "
          "{}x{}",
          path, codedWidth, codedHeight, bgr.cols, bgr.rows, nextIndex, codedWidth, codedHeight);
      sizeChangeLogged = true;
    }
    cv::Mat resized;
    const bool shrinking = bgr.cols * bgr.rows > codedWidth * codedHeight;
    cv::resize(bgr, resized, cv::Size(codedWidth, codedHeight), 0, 0,
               shrinking ? cv::INTER_AREA : cv::INTER_LINEAR);
    return resized;
  }

  Frame takeFrame(std::int64_t pts) {
    Frame frame;
    frame.bgr = toBgr();
    frame.index = indexOf(pts);
    frame.timestampSeconds = seconds(pts);
    nextIndex = frame.index + 1;
    av_frame_unref(decoded.get());
    return frame;
  }

  // Every frame's presentation time, from the packets alone (a second demuxer; nothing is decoded).
  void scanFramePts() {
    AVFormatContext* raw = nullptr;
    int result = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
    if (result < 0) throw error("cannot reopen for seeking", result);
    InputContext scan(raw);
    for (unsigned i = 0; i < scan->nb_streams; ++i)
      scan->streams[i]->discard = static_cast<int>(i) == streamIndex ? AVDISCARD_DEFAULT : AVDISCARD_ALL;
    PacketPtr scanned = allocatePacket();
    framePtsComplete = true;
    while ((result = av_read_frame(scan.get(), scanned.get())) >= 0) {
      if (scanned->stream_index == streamIndex && !(scanned->flags & AV_PKT_FLAG_DISCARD)) {
        if (scanned->pts == AV_NOPTS_VALUE) framePtsComplete = false;
        framePts.push_back(scanned->pts);
      }
      av_packet_unref(scanned.get());
    }
    if (!framePtsComplete) return countFramesToSeek("packets without timestamps");
    std::sort(framePts.begin(), framePts.end());
    if (std::adjacent_find(framePts.begin(), framePts.end()) != framePts.end())
      return countFramesToSeek("packets share timestamps");
    // Pictures before the stream's start (edit lists) are never shown.
    framePts.erase(framePts.begin(), std::lower_bound(framePts.begin(), framePts.end(), startPts));
  }

  // Back to the start by opening the file again.
  void reopen() {
    AVFormatContext* raw = nullptr;
    int result = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
    if (result < 0) throw error("cannot reopen to seek", result);
    InputContext reopened(raw);
    result = avformat_find_stream_info(reopened.get(), nullptr);
    if (result < 0 || static_cast<int>(reopened->nb_streams) <= streamIndex)
      throw MediaError(path, "cannot reopen to seek: the streams changed");
    for (unsigned i = 0; i < reopened->nb_streams; ++i)
      if (static_cast<int>(i) != streamIndex) reopened->streams[i]->discard = AVDISCARD_ALL;
    format = std::move(reopened);
    stream = format->streams[streamIndex];
  }

  // From seekPts (or the start); `fresh`: from the start through a new demuxer, as a first read would.
  void restartDecoder(std::int64_t seekPts, bool fromStart, bool fresh = false) {
    int result = -1;
    if (!fresh) {
      result = fromStart ? avformat_seek_file(format.get(), streamIndex, INT64_MIN, startPts, startPts, 0)
                         : av_seek_frame(format.get(), streamIndex, seekPts, AVSEEK_FLAG_BACKWARD);
      if (result < 0 && !fromStart)
        result = avformat_seek_file(format.get(), streamIndex, INT64_MIN, startPts, startPts, 0);
    }
    if (result < 0) reopen();  // raw streams without an index cannot seek, not even to the start
    avcodec_flush_buffers(decoder.get());
    av_frame_unref(decoded.get());
    demuxEnded = false;
    lastPacketCorrupt = false;
    av_packet_unref(heldPacket.get());
    failure.clear();
    readError.reset();
    lastPts = AV_NOPTS_VALUE;
    ptsOffset = 0;
    pending.reset();
  }
};

VideoFileSource::VideoFileSource(const std::string& path) : state_(std::make_unique<State>()) {
  routeFfmpegLogs();
  State& s = *state_;
  s.path = path;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw MediaError(path, "no such file");
  if (std::filesystem::is_directory(path, ec)) throw MediaError(path, "is a folder, not a video file");

  AVFormatContext* raw = nullptr;
  int result = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (result < 0) throw s.error("not a readable video file", result);
  s.format.reset(raw);
  result = avformat_find_stream_info(s.format.get(), nullptr);
  if (result < 0) throw s.error("cannot read the stream information", result);
  const AVCodec* codec = nullptr;
  s.streamIndex = av_find_best_stream(s.format.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (s.streamIndex == AVERROR_STREAM_NOT_FOUND) throw MediaError(path, "has no video stream");
  if (s.streamIndex < 0 || !codec) {
    const AVStream* video = s.streamIndex >= 0 ? s.format->streams[s.streamIndex] : nullptr;
    throw MediaError(path, std::string("no decoder for its video codec ") +
                               (video ? avcodec_get_name(video->codecpar->codec_id) : "?"));
  }
  s.stream = s.format->streams[s.streamIndex];
  for (unsigned i = 0; i < s.format->nb_streams; ++i)
    if (static_cast<int>(i) != s.streamIndex) s.format->streams[i]->discard = AVDISCARD_ALL;

  s.decoder.reset(avcodec_alloc_context3(codec));
  if (!s.decoder) throw std::bad_alloc();
  result = avcodec_parameters_to_context(s.decoder.get(), s.stream->codecpar);
  if (result < 0) throw s.error("cannot set up the decoder", result);
  s.decoder->thread_count = 0;  // one per core
  s.decoder->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
  s.decoder->pkt_timebase = s.stream->time_base;
  result = avcodec_open2(s.decoder.get(), codec, nullptr);
  if (result < 0) throw s.error(std::string("cannot open the ") + codec->name + " decoder", result);

  SourceInfo& info = s.info;
  info.name = path;
  info.codec = avcodec_get_name(s.stream->codecpar->codec_id);
  info.rotationDegrees = displayRotation(s.stream, path);
  const bool swap = info.rotationDegrees == 90 || info.rotationDegrees == 270;
  s.codedWidth = s.stream->codecpar->width;
  s.codedHeight = s.stream->codecpar->height;
  info.width = swap ? s.stream->codecpar->height : s.stream->codecpar->width;
  info.height = swap ? s.stream->codecpar->width : s.stream->codecpar->height;
  const AVRational rate = av_guess_frame_rate(s.format.get(), s.stream, nullptr);
  info.fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
  info.timeBase = {s.stream->time_base.num, s.stream->time_base.den};
  s.startPts = s.stream->start_time != AV_NOPTS_VALUE ? s.stream->start_time : 0;
  if (info.fps > 0)
    s.frameTicks = std::max<std::int64_t>(1, av_rescale_q(1, av_inv_q(rate), s.stream->time_base));
  if (s.stream->duration != AV_NOPTS_VALUE && s.stream->duration > 0)
    info.durationSeconds = static_cast<double>(s.stream->duration) * av_q2d(s.stream->time_base);
  else if (s.format->duration != AV_NOPTS_VALUE && s.format->duration > 0)
    info.durationSeconds = static_cast<double>(s.format->duration) / AV_TIME_BASE;
  s.storedFrames = s.stream->nb_frames;
  if (s.storedFrames > 0)
    info.frameCount = s.storedFrames;
  else if (info.durationSeconds > 0 && info.fps > 0)
    info.frameCount = std::llround(info.durationSeconds * info.fps);
  logger().debug("{}: {} {}x{} at {:.3f} fps, {} frames, rotation {}", path, info.codec, info.width,
                 info.height, info.fps, info.frameCount, info.rotationDegrees);
}

VideoFileSource::~VideoFileSource() = default;

const SourceInfo& VideoFileSource::info() const {
  return state_->info;
}

std::optional<Frame> VideoFileSource::next() {
  State& s = *state_;
  if (s.closed) return std::nullopt;
  if (s.readError) throw *s.readError;  // until a seek, the damage stays where it is
  if (s.pending) {
    std::optional<Frame> frame = std::move(s.pending);
    s.pending.reset();
    return frame;
  }
  try {
    std::int64_t pts = 0;
    if (s.decodeOne(pts)) return s.takeFrame(pts);
    // The container said how many frames it holds; fewer means the data stopped early.
    const std::int64_t expected =
        s.framePts.empty() ? s.storedFrames : static_cast<std::int64_t>(s.framePts.size());
    if (expected > 0 && s.nextIndex < expected)
      throw MediaError(s.path, "truncated or corrupt at frame " + std::to_string(s.nextIndex) + " of " +
                                   std::to_string(expected));
    // A stream that ends before its first picture (e.g. a cut still image probed as a one-frame video)
    // would otherwise pass for an empty video and give a run with no output and no error.
    if (s.nextIndex == 0) throw MediaError(s.path, "no frame could be decoded: empty, truncated or corrupt");
  } catch (const MediaError& e) {
    s.readError = e;
    throw;
  }
  return std::nullopt;
}

void VideoFileSource::seek(std::int64_t frameIndex) {
  State& s = *state_;
  if (s.closed) throw MediaError(s.path, "seek after close");
  if (!s.seeked) {
    s.scanFramePts();
    s.seeked = true;
  }
  const auto count = static_cast<std::int64_t>(s.framePts.size());
  if (frameIndex < 0 || (s.framePtsComplete && frameIndex >= count))
    throw MediaError(s.path, "cannot seek to frame " + std::to_string(frameIndex) + ": the video has " +
                                 std::to_string(count) + " frames");
  std::int64_t pts = 0;
  if (!s.framePtsComplete) {  // no timestamps to aim at: count frames from the start, as a first read does
    s.restartDecoder(s.startPts, true, /*fresh=*/true);
    s.nextIndex = 0;
    for (std::int64_t i = 0; i <= frameIndex; ++i) {
      if (!s.decodeOne(pts))
        throw MediaError(s.path, "cannot seek to frame " + std::to_string(frameIndex) + ": the video has " +
                                     std::to_string(i) + " frames");
      if (i < frameIndex) {
        av_frame_unref(s.decoded.get());
        s.nextIndex = i + 1;
      }
    }
    s.pending = s.takeFrame(pts);
    return;
  }
  const std::int64_t target = s.framePts[static_cast<size_t>(frameIndex)];
  // With B-frames a keyframe's decode time can precede a frame it is shown after; if the first picture
  // after the seek is already past the target, seek further back and try again.
  for (int attempt = 0;; ++attempt) {
    const std::int64_t back = attempt == 0 ? 0 : (std::int64_t{1} << (attempt + 3));
    const bool fromStart = frameIndex - back <= 0 || attempt >= 8;
    s.restartDecoder(s.framePts[static_cast<size_t>(std::max<std::int64_t>(0, frameIndex - back))],
                     fromStart);
    if (!s.decodeOne(pts))
      throw MediaError(s.path, "no frame after seeking to frame " + std::to_string(frameIndex));
    bool skipped = false;
    while (pts < target) {
      av_frame_unref(s.decoded.get());
      s.nextIndex = s.indexOf(pts) + 1;
      skipped = true;
      if (!s.decodeOne(pts))
        throw MediaError(s.path, "truncated or corrupt before frame " + std::to_string(frameIndex));
    }
    // Past the target without meeting it (the keyframe came after it in decode order, or the timestamps
    // are out of order): from further back; from the start, the file's timestamps cannot lead there,
    // unless the target is among the leading packets the decoder drops (pictures referring to frames
    // before a cut): then the first picture it can decode is the answer, as when reading from the start.
    if (pts > target && !(fromStart && !skipped && s.indexOf(pts) >= frameIndex)) {
      av_frame_unref(s.decoded.get());
      if (!fromStart) continue;
      throw MediaError(s.path,
                       "cannot seek to frame " + std::to_string(frameIndex) +
                           ": no decoded picture has its timestamp (damaged or out-of-order timestamps)");
    }
    s.pending = s.takeFrame(pts);
    return;
  }
}

void VideoFileSource::close() {
  State& s = *state_;
  s.closed = true;
  s.pending.reset();
  s.scaler.reset();
  s.decoder.reset();
  s.format.reset();
}

}  // namespace sapiens
