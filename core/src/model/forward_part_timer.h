#pragma once
// The timers behind ForwardPartClock (sapiens/model/forward_parts.h), placed where a part begins.

#include <cstdint>

namespace sapiens::detail {

enum class ForwardPart { Products, Attention };

/// Adds the time from its making to its end to `part` while a ForwardPartClock lives. Only the outermost
/// timer of a thread counts: a product inside the attention is the attention's time.
class ForwardPartTimer {
 public:
  explicit ForwardPartTimer(ForwardPart part);
  ~ForwardPartTimer();
  ForwardPartTimer(const ForwardPartTimer&) = delete;
  ForwardPartTimer& operator=(const ForwardPartTimer&) = delete;

 private:
  ForwardPart part_;
  std::int64_t startNanoseconds_ = -1;  // -1: not counting
};

}  // namespace sapiens::detail
