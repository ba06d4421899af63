#include "sapiens/model/forward_parts.h"

#include "forward_part_timer.h"

#include <atomic>
#include <chrono>

namespace sapiens {
namespace {

std::atomic<bool> timing{false};
std::atomic<std::int64_t> partNanoseconds[2];
thread_local bool insidePart = false;

std::int64_t nowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double seconds(detail::ForwardPart part) {
  return static_cast<double>(partNanoseconds[static_cast<int>(part)].load()) * 1e-9;
}

}  // namespace

ForwardPartClock::ForwardPartClock() {
  for (auto& nanoseconds : partNanoseconds) nanoseconds.store(0);
  timing.store(true);
}

ForwardPartClock::~ForwardPartClock() {
  timing.store(false);
}

ForwardPartSeconds ForwardPartClock::elapsed() const {
  return {seconds(detail::ForwardPart::Products), seconds(detail::ForwardPart::Attention)};
}

namespace detail {

ForwardPartTimer::ForwardPartTimer(ForwardPart part) : part_(part) {
  if (!timing.load(std::memory_order_relaxed) || insidePart) return;
  insidePart = true;
  startNanoseconds_ = nowNanoseconds();
}

ForwardPartTimer::~ForwardPartTimer() {
  if (startNanoseconds_ < 0) return;
  partNanoseconds[static_cast<int>(part_)].fetch_add(nowNanoseconds() - startNanoseconds_);
  insidePart = false;
}

}  // namespace detail
}  // namespace sapiens
