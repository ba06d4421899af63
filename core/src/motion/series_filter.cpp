#include "sapiens/motion/series_filter.h"

#include "sapiens/motion/motion_error.h"
#include "sapiens/motion/zero_phase_filter.h"

#include <algorithm>
#include <cmath>

namespace sapiens::motion {

namespace {

// Linear interpolation of (times, values) at `t`, times increasing and covering t.
double interpolate(const std::vector<double>& times, const std::vector<double>& values, double t) {
  auto upper = std::lower_bound(times.begin(), times.end(), t);
  if (upper == times.begin()) return values.front();
  if (upper == times.end()) return values.back();
  const std::size_t i = static_cast<std::size_t>(upper - times.begin());
  const double w = (t - times[i - 1]) / (times[i] - times[i - 1]);
  return values[i - 1] + w * (values[i] - values[i - 1]);
}

// The filtered values of one gap-free segment, or empty when it is too short to filter.
std::vector<double> filterSegment(const std::vector<double>& times, const std::vector<double>& values,
                                  const FilterPlan& plan) {
  const double span = times.back() - times.front();
  const std::size_t gridSize = static_cast<std::size_t>(std::llround(span / plan.intervalSeconds)) + 1;
  if (gridSize < filtfiltMinimumLength(plan.lowPass)) return {};
  const double step = gridSize > 1 ? span / double(gridSize - 1) : plan.intervalSeconds;
  bool even =
      gridSize == times.size() && std::abs(step - plan.intervalSeconds) <= 1e-6 * plan.intervalSeconds;
  for (std::size_t i = 0; even && i < times.size(); ++i)
    even = std::abs(times[i] - (times.front() + double(i) * step)) <= 1e-6 * plan.intervalSeconds;
  if (even) return filtfilt(plan.lowPass, values);

  std::vector<double> gridTimes(gridSize);
  std::vector<double> gridValues(gridSize);
  for (std::size_t i = 0; i < gridSize; ++i) {
    gridTimes[i] = i + 1 == gridSize ? times.back() : times.front() + double(i) * step;
    gridValues[i] = interpolate(times, values, gridTimes[i]);
  }
  const std::vector<double> smoothed = filtfilt(plan.lowPass, gridValues);
  std::vector<double> out(times.size());
  for (std::size_t i = 0; i < times.size(); ++i) out[i] = interpolate(gridTimes, smoothed, times[i]);
  return out;
}

}  // namespace

double medianFrameInterval(const SampleTimes& times) {
  std::vector<double> intervals;
  for (std::size_t r = 1; r < times.seconds.size(); ++r)
    intervals.push_back(times.seconds[r] - times.seconds[r - 1]);
  if (intervals.empty()) throw MotionError("a frame interval needs at least two samples");
  const auto mid = intervals.begin() + static_cast<std::ptrdiff_t>(intervals.size() / 2);
  std::nth_element(intervals.begin(), mid, intervals.end());
  if (intervals.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(intervals.begin(), mid));
}

FilterPlan planFilter(const SampleTimes& times, double cutoffHz, int order, int maxGapFrames,
                      const HampelSettings& hampel) {
  FilterPlan plan;
  plan.intervalSeconds = medianFrameInterval(times);
  plan.lowPass = butterworthLowPass(order, cutoffHz, 1.0 / plan.intervalSeconds);
  plan.frameStep = typicalFrameStep(times);
  plan.maxGapFrames = maxGapFrames;
  plan.hampel = hampel;
  return plan;
}

FilteredSeries filterSeries(const std::vector<double>& raw, const SampleTimes& times,
                            const FilterPlan& plan) {
  FilteredSeries result;
  std::vector<double> cleaned = raw;
  result.outliers = rejectOutliers(cleaned, plan.hampel);
  result.segments = fillShortGaps(cleaned, times, plan.maxGapFrames, plan.frameStep);
  result.values.assign(raw.size(), NAN);
  for (const RowSegment& segment : result.segments) {
    const auto first = static_cast<std::ptrdiff_t>(segment.first);
    const auto end = static_cast<std::ptrdiff_t>(segment.last + 1);
    const std::vector<double> segmentTimes(times.seconds.begin() + first, times.seconds.begin() + end);
    const std::vector<double> segmentValues(cleaned.begin() + first, cleaned.begin() + end);
    const std::vector<double> smoothed = filterSegment(segmentTimes, segmentValues, plan);
    if (smoothed.empty()) {
      ++result.unfilteredSegments;
      result.unfilteredRows += segment.rows();
      continue;
    }
    std::copy(smoothed.begin(), smoothed.end(), result.values.begin() + first);
  }
  return result;
}

}  // namespace sapiens::motion
