#pragma once
// A colour as the resource files give it: red, green, blue. OpenCV images are BGR: see toBgr.

#include <opencv2/core/types.hpp>

#include <array>
#include <cstdint>

namespace sapiens {

using Rgb = std::array<std::uint8_t, 3>;

inline cv::Scalar toBgr(const Rgb& rgb) {
  return cv::Scalar(rgb[2], rgb[1], rgb[0]);
}

}  // namespace sapiens
