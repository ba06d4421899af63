#include "sapiens/media/video_concat.h"

#include "media/ffmpeg_handles.h"
#include "media/file_placement.h"
#include "sapiens/common/log.h"
#include "sapiens/media/media_error.h"

#include <cstring>
#include <filesystem>

namespace sapiens {

using namespace media_detail;

namespace {

struct OpenedPart {
  InputContext demuxer;
  AVStream* stream = nullptr;
};

OpenedPart openPart(const std::string& path) {
  AVFormatContext* raw = nullptr;
  int result = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (result < 0) throw MediaError(path, "cannot open: " + errorText(result));
  OpenedPart part;
  part.demuxer.reset(raw);
  result = avformat_find_stream_info(raw, nullptr);
  if (result < 0) throw MediaError(path, "cannot read the stream information: " + errorText(result));
  const int index = av_find_best_stream(raw, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (index < 0) throw MediaError(path, "holds no video stream");
  part.stream = raw->streams[index];
  return part;
}

// The same encoding, so that one decoder set up from the first part's parameters decodes them all.
void requireSameEncoding(const std::string& path, const AVStream& first, const AVStream& other) {
  const AVCodecParameters& a = *first.codecpar;
  const AVCodecParameters& b = *other.codecpar;
  if (a.codec_id != b.codec_id || a.width != b.width || a.height != b.height || a.format != b.format ||
      av_cmp_q(first.time_base, other.time_base) != 0 || a.extradata_size != b.extradata_size ||
      (a.extradata_size > 0 && std::memcmp(a.extradata, b.extradata, a.extradata_size) != 0)) {
    throw MediaError(path, "is encoded differently from the first part (" +
                               std::string(avcodec_get_name(b.codec_id)) + " " + std::to_string(b.width) +
                               "x" + std::to_string(b.height) + " against " + avcodec_get_name(a.codec_id) +
                               " " + std::to_string(a.width) + "x" + std::to_string(a.height) +
                               "); it cannot be joined without re-encoding");
  }
}

}  // namespace

std::int64_t concatenateVideos(const std::vector<std::string>& parts, const std::string& output) {
  routeFfmpegLogs();
  if (parts.empty()) throw MediaError(output, "no videos to join");
  const AVOutputFormat* container = av_guess_format(nullptr, output.c_str(), nullptr);
  if (!container) throw MediaError(output, "no container format for this file name (use .mp4, .mkv, .mov)");

  const std::string temporary = createTemporaryBeside(output);
  std::int64_t frames = 0;
  try {
    OpenedPart first = openPart(parts.front());
    AVFormatContext* raw = nullptr;
    int result = avformat_alloc_output_context2(&raw, container, nullptr, temporary.c_str());
    if (result < 0 || !raw) throw MediaError(output, "cannot set up the container: " + errorText(result));
    OutputContext muxer(raw);
    AVStream* stream = avformat_new_stream(muxer.get(), nullptr);
    if (!stream) throw std::bad_alloc();
    result = avcodec_parameters_copy(stream->codecpar, first.stream->codecpar);
    if (result < 0) throw MediaError(output, "cannot copy the stream parameters: " + errorText(result));
    stream->codecpar->codec_tag = 0;
    stream->time_base = first.stream->time_base;
    stream->avg_frame_rate = first.stream->avg_frame_rate;
    result = avio_open(&muxer->pb, temporary.c_str(), AVIO_FLAG_WRITE);
    if (result < 0) throw MediaError(output, "cannot write: " + errorText(result));
    AVDictionary* settings = nullptr;
    requestExactMp4Timescale(&settings, container, stream->time_base);
    result = avformat_write_header(muxer.get(), &settings);
    av_dict_free(&settings);
    if (result < 0) throw MediaError(output, "cannot write the header: " + errorText(result));

    PacketPtr packet = allocatePacket();
    std::int64_t lastPts = AV_NOPTS_VALUE;  // in the output stream's time base
    for (std::size_t i = 0; i < parts.size(); ++i) {
      OpenedPart part = i == 0 ? std::move(first) : openPart(parts[i]);
      if (i > 0) requireSameEncoding(parts[i], *muxer->streams[0], *part.stream);
      bool firstPacket = true;
      while ((result = av_read_frame(part.demuxer.get(), packet.get())) >= 0) {
        if (packet->stream_index != part.stream->index) {
          av_packet_unref(packet.get());
          continue;
        }
        av_packet_rescale_ts(packet.get(), part.stream->time_base, stream->time_base);
        if (packet->pts == AV_NOPTS_VALUE || (lastPts != AV_NOPTS_VALUE && packet->pts <= lastPts)) {
          const std::string reason =
              firstPacket ? "starts before the previous part ends: the parts overlap or are out of order"
                          : "has frames out of order (not written by this tool?)";
          av_packet_unref(packet.get());
          throw MediaError(parts[i], reason);
        }
        firstPacket = false;
        lastPts = packet->pts;
        packet->stream_index = stream->index;
        packet->pos = -1;
        result = av_interleaved_write_frame(muxer.get(), packet.get());
        if (result < 0) throw MediaError(output, "cannot write: " + errorText(result));
        ++frames;
      }
      if (result != AVERROR_EOF)
        throw MediaError(parts[i], "cannot be read to its end: " + errorText(result));
    }
    result = av_write_trailer(muxer.get());
    if (result < 0) throw MediaError(output, "cannot write the index: " + errorText(result));
    avio_flush(muxer->pb);
    const int pending = muxer->pb->error;
    result = avio_closep(&muxer->pb);
    if (pending < 0 || result < 0)
      throw MediaError(output, "cannot write: " + errorText(pending < 0 ? pending : result));
    placeFinishedFile(temporary, output);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temporary, ec);
    throw;
  }
  logger().info("{}: {} frames joined from {} parts", output, frames, parts.size());
  return frames;
}

}  // namespace sapiens
