#include "sapiens/media/synthetic_live_source.h"

#include "sapiens/media/frame_number_pattern.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sapiens {

std::optional<SyntheticLiveOptions> parseSyntheticSourceName(const std::string& name) {
  if (name.rfind(kSyntheticSourcePrefix, 0) != 0) return std::nullopt;
  const std::string spec = name.substr(kSyntheticSourcePrefix.size());
  const auto malformed = [&name] {
    return MediaError(name,
                      "expected synthetic:[WIDTHxHEIGHT][@FPS], e.g. synthetic:640x480@30, with a size "
                      "from 16x20 to 7680x4320 and 0.1 to 240 frames per second");
  };
  SyntheticLiveOptions options;
  const std::size_t at = spec.find('@');
  const std::string size = spec.substr(0, at);
  try {
    if (!size.empty()) {
      const std::size_t x = size.find('x');
      if (x == std::string::npos) throw malformed();
      std::size_t used = 0;
      options.width = std::stoi(size.substr(0, x), &used);
      if (used != x) throw malformed();
      const std::string height = size.substr(x + 1);
      options.height = std::stoi(height, &used);
      if (used != height.size()) throw malformed();
    }
    if (at != std::string::npos) {
      const std::string fps = spec.substr(at + 1);
      std::size_t used = 0;
      options.fps = std::stod(fps, &used);
      if (used != fps.size()) throw malformed();
    }
  } catch (const std::logic_error&) {  // stoi/stod: not a number or out of range
    throw malformed();
  }
  if (options.width < 16 || options.height < 20 || options.width > 7680 || options.height > 4320 ||
      !(options.fps >= 0.1 && options.fps <= 240))
    throw malformed();
  return options;
}

SyntheticLiveSource::SyntheticLiveSource(const SyntheticLiveOptions& options)
    : options_(options), start_(std::chrono::steady_clock::now()) {
  if (!(options.fps > 0)) throw MediaError("synthetic", "fps must be positive");
  info_.name = "synthetic";
  info_.width = options.width;
  info_.height = options.height;
  info_.fps = options.fps;
  info_.timeBase = {1000, static_cast<int>(std::lround(options.fps * 1000))};
  info_.live = true;
  info_.codec = "synthetic";
}

std::optional<Frame> SyntheticLiveSource::next() {
  const double period = 1.0 / options_.fps;
  const std::int64_t wanted = lastDelivered_ + 1;
  std::unique_lock<std::mutex> lock(mutex_);
  if (closed_ || (options_.frameLimit >= 0 && wanted >= options_.frameLimit)) return std::nullopt;
  const auto due = start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double>(static_cast<double>(wanted) * period));
  if (closedSignal_.wait_until(lock, due, [this] { return closed_; })) return std::nullopt;
  lock.unlock();

  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::int64_t newest = std::max(wanted, static_cast<std::int64_t>(std::floor(elapsed / period)));
  if (options_.frameLimit >= 0) newest = std::min(newest, options_.frameLimit - 1);
  if (options_.failAtFrame >= 0 && newest >= options_.failAtFrame)
    throw MediaError(info_.name,
                     "camera stopped responding at frame " + std::to_string(options_.failAtFrame));
  dropped_ += newest - wanted;
  lastDelivered_ = newest;

  Frame frame;
  frame.bgr = frameNumberPicture(options_.width, options_.height, newest);
  frame.index = newest;
  frame.timestampSeconds = static_cast<double>(newest) / options_.fps;
  return frame;
}

void SyntheticLiveSource::close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  closedSignal_.notify_all();
}

}  // namespace sapiens
