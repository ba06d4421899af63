#pragma once
// Where a forward's time goes on the CPU, for `bench`: the wall time the thread running the forward
// spends in the linear layers' matrix products (their fused epilogues included) and in the attention
// (scores, softmax, probabilities times values). Meaningless on CUDA, whose operations return before
// they run.

namespace sapiens {

struct ForwardPartSeconds {
  double products = 0;
  double attention = 0;
};

/// Times the forward parts while it lives: one at a time in a process. Without one, each timed part
/// costs one relaxed atomic load.
class ForwardPartClock {
 public:
  ForwardPartClock();
  ~ForwardPartClock();
  ForwardPartClock(const ForwardPartClock&) = delete;
  ForwardPartClock& operator=(const ForwardPartClock&) = delete;

  /// The parts' time since the clock was made.
  ForwardPartSeconds elapsed() const;
};

}  // namespace sapiens
