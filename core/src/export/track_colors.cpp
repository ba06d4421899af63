#include "sapiens/export/track_colors.h"

#include <cmath>

namespace sapiens {

Rgb trackColor(int trackId) {
  if (trackId < 0) return {0, 255, 0};
  constexpr double kGoldenRatio = 0.6180339887498949;
  // HSV with saturation 0.85 and value 1: hue sextant and the two falling/rising channels.
  const double hue = std::fmod(0.08 + trackId * kGoldenRatio, 1.0) * 6.0;
  const int sextant = static_cast<int>(hue) % 6;
  const double f = hue - std::floor(hue), low = 1.0 - 0.85;
  const double falling = 1.0 - 0.85 * f, rising = 1.0 - 0.85 * (1.0 - f);
  double r = 1, g = 1, b = 1;
  switch (sextant) {
    case 0:
      r = 1, g = rising, b = low;
      break;
    case 1:
      r = falling, g = 1, b = low;
      break;
    case 2:
      r = low, g = 1, b = rising;
      break;
    case 3:
      r = low, g = falling, b = 1;
      break;
    case 4:
      r = rising, g = low, b = 1;
      break;
    default:
      r = 1, g = low, b = falling;
      break;
  }
  const auto byte = [](double v) { return static_cast<std::uint8_t>(std::lround(v * 255.0)); };
  return {byte(r), byte(g), byte(b)};
}

}  // namespace sapiens
