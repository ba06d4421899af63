#include "pipeline/pose_crop.h"

#include <fmt/format.h>
#include <opencv2/imgproc.hpp>

#include <stdexcept>

namespace sapiens {

// The box arithmetic is float32 because the official code runs it on float32 numpy arrays (with Python
// numbers converted to float32); the warp must match to the bit.
PoseCrop poseCropFor(const BoundingBox& box, InputSize size, float padding) {
  if (size.width <= 0 || size.height <= 0) {
    throw std::invalid_argument(
        fmt::format("poseCropFor: invalid input size {}x{}", size.width, size.height));
  }
  PoseCrop crop;
  crop.center = {(box.x1 + box.x2) * 0.5f, (box.y1 + box.y2) * 0.5f};
  float w = (box.x2 - box.x1) * padding;
  float h = (box.y2 - box.y1) * padding;
  if (!(w > 0.0f) || !(h > 0.0f)) {
    throw std::invalid_argument(
        fmt::format("poseCropFor: empty box ({}, {}, {}, {})", box.x1, box.y1, box.x2, box.y2));
  }
  const auto aspect = static_cast<float>(static_cast<double>(size.width) / size.height);
  if (w > h * aspect) {
    h = w / aspect;
  } else {
    w = h * aspect;
  }
  crop.scale = {w, h};

  // get_udp_warp_matrix at rotation 0, with numpy 1.x scalar promotion: Python number (op) float32
  // scalar is evaluated in float64, so the factors and translations are float64 until they are stored
  // in the float32 matrix. input_size = center * 2 is a float32 array operation (exact).
  const double scaleX = static_cast<double>(size.width - 1) / static_cast<double>(w);
  const double scaleY = static_cast<double>(size.height - 1) / static_cast<double>(h);
  const double doubledX = static_cast<double>(crop.center[0] * 2.0f);
  const double doubledY = static_cast<double>(crop.center[1] * 2.0f);
  const double translationX = scaleX * (-0.5 * doubledX + 0.5 * static_cast<double>(w));
  const double translationY = scaleY * (-0.5 * doubledY + 0.5 * static_cast<double>(h));
  // The official matrix holds -sin(0) * sx = -0.0 at (0, 1).
  crop.warp = cv::Matx23f(static_cast<float>(scaleX), -0.0f, static_cast<float>(translationX),  //
                          0.0f, static_cast<float>(scaleY), static_cast<float>(translationY));
  return crop;
}

cv::Mat warpPoseCrop(const cv::Mat& bgr, const PoseCrop& crop, InputSize size) {
  if (bgr.empty() || bgr.type() != CV_8UC3) {
    throw std::invalid_argument(fmt::format("warpPoseCrop: expected a CV_8UC3 BGR image, got {}x{} type {}",
                                            bgr.cols, bgr.rows, bgr.type()));
  }
  const bool shrinks = std::min(crop.warp(0, 0), crop.warp(1, 1)) < 1.0f;
  cv::Mat out;
  cv::warpAffine(bgr, out, cv::Mat(crop.warp), cv::Size(size.width, size.height),
                 shrinks ? cv::INTER_LINEAR : cv::INTER_CUBIC, cv::BORDER_CONSTANT, cv::Scalar::all(0));
  return out;
}

std::array<double, 2> inputToImage(const std::array<double, 2>& inputPixel, const PoseCrop& crop,
                                   InputSize size) {
  // kp / input_size * scale + center - 0.5 * scale, numpy order; 0.5 * scale stays float32 (exact).
  std::array<double, 2> image{};
  const int inputSide[2] = {size.width, size.height};
  for (int axis = 0; axis < 2; ++axis) {
    image[axis] = inputPixel[axis] / inputSide[axis] * static_cast<double>(crop.scale[axis]) +
                  static_cast<double>(crop.center[axis]) - static_cast<double>(0.5f * crop.scale[axis]);
  }
  return image;
}

}  // namespace sapiens
