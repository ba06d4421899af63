#include "sapiens/motion/hampel.h"

#include <algorithm>
#include <cmath>

namespace sapiens::motion {

namespace {

double median(std::vector<double> values) {
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)));
}

}  // namespace

std::size_t rejectOutliers(std::vector<double>& series, const HampelSettings& settings) {
  constexpr double kMadToSigma = 1.4826;
  const std::vector<double> original = series;
  const std::size_t half = static_cast<std::size_t>(std::max(settings.halfWindow, 0));
  std::size_t rejected = 0;
  std::vector<double> window;
  std::vector<double> deviations;
  for (std::size_t i = 0; i < original.size(); ++i) {
    if (!std::isfinite(original[i])) continue;
    window.clear();
    for (std::size_t j = i > half ? i - half : 0; j <= std::min(original.size() - 1, i + half); ++j)
      if (std::isfinite(original[j])) window.push_back(original[j]);
    if (window.size() < 3) continue;
    const double centre = median(window);
    deviations.clear();
    for (double v : window) deviations.push_back(std::abs(v - centre));
    const double sigma = kMadToSigma * median(deviations);
    if (std::abs(original[i] - centre) > settings.nSigmas * sigma) {
      series[i] = centre;
      ++rejected;
    }
  }
  return rejected;
}

}  // namespace sapiens::motion
