#pragma once
// One series (an angle or one coordinate of a marker) cleaned and smoothed as motion analysis does it:
// Hampel outliers removed, short gaps interpolated on the real timestamps, then a zero-phase Butterworth
// low-pass per gap-free segment.
//
// Variable frame rate: the filter is designed for the clip's median frame interval. A segment whose
// samples are evenly spaced at that interval (within 1e-6 of it) is filtered as it is (then the result is
// exactly scipy's filtfilt of it); any other segment is interpolated linearly onto an even grid over its
// span at about that interval, filtered there and interpolated back onto its real timestamps.
// A segment with fewer grid samples than filtfilt needs (16 for order 4) cannot be filtered: its rows stay
// NaN in the filtered series and are counted (never passed through unfiltered).

#include "sapiens/motion/butterworth.h"
#include "sapiens/motion/gap_fill.h"
#include "sapiens/motion/hampel.h"
#include "sapiens/motion/motion_tables.h"

#include <cstdint>
#include <vector>

namespace sapiens::motion {

/// The filter as designed for one clip.
struct FilterPlan {
  IirCoefficients lowPass;
  double intervalSeconds = 0.0;  // the clip's median frame interval
  std::int64_t frameStep = 1;    // typicalFrameStep of the clip
  int maxGapFrames = 10;
  HampelSettings hampel;
};

struct FilteredSeries {
  std::vector<double> values;        // NaN outside the segments and in those too short to filter
  std::vector<RowSegment> segments;  // the gap-free segments after gap filling
  std::size_t outliers = 0;          // Hampel rejections
  std::size_t unfilteredSegments = 0;
  std::size_t unfilteredRows = 0;  // rows of those segments, left NaN
};

/// The clip's median frame interval in seconds; `times` has at least two increasing rows.
double medianFrameInterval(const SampleTimes& times);

/// A Butterworth low-pass of `order` at `cutoffHz` for the clip sampled at `times` (MotionError when the
/// cutoff is not below the Nyquist frequency of its median frame rate).
FilterPlan planFilter(const SampleTimes& times, double cutoffHz, int order, int maxGapFrames,
                      const HampelSettings& hampel);

FilteredSeries filterSeries(const std::vector<double>& raw, const SampleTimes& times, const FilterPlan& plan);

}  // namespace sapiens::motion
