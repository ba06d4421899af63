#include "sample_interval.h"

#include <algorithm>
#include <stdexcept>

namespace sapiens::motion {

double medianSampleInterval(const SampleTimes& times) {
  if (times.seconds.size() < 2) throw std::invalid_argument("a sampling interval needs at least two samples");
  std::vector<double> intervals;
  intervals.reserve(times.seconds.size() - 1);
  for (std::size_t i = 1; i < times.seconds.size(); ++i)
    intervals.push_back(times.seconds[i] - times.seconds[i - 1]);
  const std::size_t middle = intervals.size() / 2;
  std::nth_element(intervals.begin(), intervals.begin() + static_cast<std::ptrdiff_t>(middle),
                   intervals.end());
  const double upper = intervals[middle];
  if (intervals.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(intervals.begin(), intervals.begin() + static_cast<std::ptrdiff_t>(middle));
  return (lower + upper) / 2;
}

}  // namespace sapiens::motion
