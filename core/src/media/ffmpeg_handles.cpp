#include "media/ffmpeg_handles.h"

#include <cstdint>
#include <cstring>

#include "sapiens/common/log.h"

extern "C" {
#include <libavutil/log.h>
}

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>

namespace sapiens::media_detail {
namespace {

thread_local FfmpegErrorCapture* activeCapture = nullptr;

std::string trimmed(const char* text) {
  std::string line(text);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

void forwardFfmpegLog(void* object, int level, const char* format, va_list arguments) {
  if (level > AV_LOG_WARNING) return;
  va_list copy;
  va_copy(copy, arguments);
  char line[1024];
  int prefix = 1;
  av_log_format_line2(object, level, format, arguments, line, sizeof line, &prefix);
  const std::string text = trimmed(line);
  if (!text.empty()) logger().debug("ffmpeg: {}", text);
  if (level <= AV_LOG_ERROR && activeCapture) {
    char message[1024];
    std::vsnprintf(message, sizeof message, format, copy);
    activeCapture->record(trimmed(message));
  }
  va_end(copy);
}

}  // namespace

FfmpegErrorCapture::FfmpegErrorCapture() : previous_(activeCapture) {
  activeCapture = this;
}
FfmpegErrorCapture::~FfmpegErrorCapture() {
  activeCapture = previous_;
}

void routeFfmpegLogs() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(forwardFfmpegLog); });
}

void requestExactMp4Timescale(AVDictionary** settings, const AVOutputFormat* container, AVRational timeBase) {
  if (!container || (std::strcmp(container->name, "mp4") != 0 && std::strcmp(container->name, "mov") != 0))
    return;
  if (timeBase.num <= 0 || timeBase.den <= 0) return;
  std::int64_t timescale = timeBase.den;
  if (timeBase.num == 1) {
    while (timescale < 10000) timescale *= 2;  // what the muxer itself would pick for the track
  }
  if (timescale > INT32_MAX) return;
  av_dict_set_int(settings, "video_track_timescale", timescale, 0);
  av_dict_set_int(settings, "movie_timescale", timescale, 0);
}

}  // namespace sapiens::media_detail
