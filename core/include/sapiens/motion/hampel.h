#pragma once
// Hampel outlier rejection: a value further than nSigmas robust standard deviations (MAD * 1.4826) from the
// median of its window is an outlier.

#include <cstddef>
#include <vector>

namespace sapiens::motion {

struct HampelSettings {
  int halfWindow = 3;    // the window is the value and halfWindow rows either side (7 rows)
  double nSigmas = 3.0;  // threshold in robust standard deviations
};

/// Replaces every outlier of `series` by its window's median (the classic Hampel filter: an outlier at a
/// segment's end is corrected too, not cut off) and returns how many there were. Every decision is taken
/// on the original values; NaN values are skipped in the windows; a window with fewer than 3 finite values
/// rejects nothing.
std::size_t rejectOutliers(std::vector<double>& series, const HampelSettings& settings);

}  // namespace sapiens::motion
