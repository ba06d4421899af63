#include "sapiens/export/track_colors.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>

namespace sapiens {

Rgb trackColor(int trackId) {
  if (trackId < 0) return {0, 255, 0};
  constexpr double kGoldenRatio = 0.6180339887498949;
  const double hue = std::fmod(0.08 + trackId * kGoldenRatio, 1.0) * 360.0;
  const cv::Mat3f hsv(1, 1, cv::Vec3f(static_cast<float>(hue), 0.85f, 1.0f));
  cv::Mat3f rgb;
  cv::cvtColor(hsv, rgb, cv::COLOR_HSV2RGB);
  const cv::Vec3f c = rgb(0, 0);
  const auto byte = [](float v) { return static_cast<std::uint8_t>(std::lround(v * 255.0f)); };
  return {byte(c[0]), byte(c[1]), byte(c[2])};
}

}  // namespace sapiens
