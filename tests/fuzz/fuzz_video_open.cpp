// libFuzzer target: opening a video file (openFrameSource) on arbitrary bytes and reading up to 8 frames.
// The first byte picks the file's extension (low 3 bits; FFmpeg uses it as a hint when probing) and
// whether (bit 3) the source then seeks to frame byte >> 4 and reads on from there; the rest is the file.
// Every input must open and read, with CV_8UC3 frames and seek landing on the frame asked for (or on the
// first decodable one, when the frames asked for are dropped leading pictures), or be
// refused with MediaError at open, read or seek; anything else (a crash, a sanitizer report, another
// exception) is a bug.

#include "fuzz_support.h"
#include "sapiens/common/log.h"
#include "sapiens/media/frame_source.h"

#include <opencv2/core.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace {

using sapiens::fuzz::check;

void checkFrame(const sapiens::Frame& frame) {
  check(!frame.bgr.empty() && frame.bgr.type() == CV_8UC3, "a frame is a non-empty CV_8UC3");
  check(frame.index >= 0 && std::isfinite(frame.timestampSeconds), "a frame has an index and a time");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool quiet = [] {
    sapiens::log::setConsoleLevel(sapiens::log::Level::Off);
    return true;
  }();
  (void)quiet;
  if (size == 0) return 0;
  static const std::array<const char*, 8> kExtensions = {".mp4",  ".avi", ".mkv", ".mov",
                                                         ".webm", ".ts",  ".gif", ".y4m"};
  const std::uint8_t selector = data[0];
  const std::string path = sapiens::fuzz::scratchDir("video_open") + "/input" + kExtensions[selector & 7u];
  sapiens::fuzz::writeFile(path, data + 1, size - 1);
  try {
    const std::unique_ptr<sapiens::FrameSource> source = sapiens::openFrameSource(path);
    check(source != nullptr, "openFrameSource returns a source or throws");
    int frames = 0;
    for (std::optional<sapiens::Frame> frame; frames < 8 && (frame = source->next()); ++frames)
      checkFrame(*frame);
    if ((selector & 8u) != 0 && source->seekable()) {
      const std::int64_t target = selector >> 4;
      source->seek(target);
      const std::optional<sapiens::Frame> frame = source->next();
      check(frame.has_value(), "a seek that succeeded has a frame to hand out");
      checkFrame(*frame);
      // On that frame; or, when the frames from it on are leading pictures the decoder drops (they refer
      // to frames before a cut), on the first picture it can decode, the one reading from the start gives.
      bool landed = frame->index == target;
      if (!landed && frame->index > target) {
        const std::optional<sapiens::Frame> first = sapiens::openFrameSource(path)->next();
        landed = first && first->index == frame->index;
      }
      check(landed, "seek(" + std::to_string(target) + ") lands on that frame, not frame " +
                        std::to_string(frame->index));
      for (int more = 0; more < 3 && source->next(); ++more) {
      }
    }
  } catch (const sapiens::MediaError&) {
  }
  return 0;
}
