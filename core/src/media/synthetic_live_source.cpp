#include "sapiens/media/synthetic_live_source.h"

#include "sapiens/media/frame_number_pattern.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace sapiens {

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
