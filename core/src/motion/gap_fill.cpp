#include "sapiens/motion/gap_fill.h"

#include <algorithm>
#include <cmath>

namespace sapiens::motion {

std::int64_t typicalFrameStep(const SampleTimes& times) {
  std::vector<std::int64_t> steps;
  for (std::size_t r = 1; r < times.frames.size(); ++r)
    steps.push_back(times.frames[r] - times.frames[r - 1]);
  if (steps.empty()) return 1;
  const auto mid = steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2);
  std::nth_element(steps.begin(), mid, steps.end());
  return std::max<std::int64_t>(*mid, 1);
}

std::size_t missingSamples(const SampleTimes& times, std::size_t before, std::size_t after,
                           std::int64_t frameStep) {
  const std::size_t rows = after - before - 1;
  if (times.frames.size() <= after) return rows;
  const double steps =
      double(times.frames[after] - times.frames[before]) / double(std::max<std::int64_t>(frameStep, 1));
  const double frames = std::max(0.0, std::round(steps) - 1.0);
  return std::max(rows, static_cast<std::size_t>(frames));
}

std::vector<RowSegment> fillShortGaps(std::vector<double>& series, const SampleTimes& times, int maxGapFrames,
                                      std::int64_t frameStep) {
  std::vector<RowSegment> segments;
  bool open = false;
  std::size_t previous = 0;
  for (std::size_t r = 0; r < series.size(); ++r) {
    if (!std::isfinite(series[r])) continue;
    if (!open) {
      segments.push_back({r, r});
      open = true;
    } else if (missingSamples(times, previous, r, frameStep) <=
               static_cast<std::size_t>(std::max(maxGapFrames, 0))) {
      const double t0 = times.seconds[previous];
      const double span = times.seconds[r] - t0;
      for (std::size_t g = previous + 1; g < r; ++g) {
        const double w = (times.seconds[g] - t0) / span;
        series[g] = series[previous] + w * (series[r] - series[previous]);
      }
      segments.back().last = r;
    } else {
      segments.push_back({r, r});
    }
    segments.back().last = r;
    previous = r;
  }
  return segments;
}

}  // namespace sapiens::motion
