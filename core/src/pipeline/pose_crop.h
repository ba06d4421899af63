#pragma once
// The top-down pose crop: a person box becomes a padded, aspect-corrected region that an unbiased (UDP)
// affine warp maps onto the network input, as the official pose pipeline does it (float32 box
// arithmetic; warp factors in float64, stored as float32), bit for bit.

#include "pipeline/preprocess.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>
#include <opencv2/core/matx.hpp>

#include <array>

namespace sapiens {

/// The official bbox padding factor.
inline constexpr float kPoseBoxPadding = 1.25f;

struct PoseCrop {
  std::array<float, 2> center{};  ///< box centre, image pixels
  std::array<float, 2> scale{};   ///< region width and height: box x padding, widened to the input aspect
  cv::Matx23f warp;               ///< image -> input pixels: u = sx * (x - cx + w / 2), sx = (W_in - 1) / w
};

/// center = ((x1 + x2) / 2, (y1 + y2) / 2), scale = (x2 - x1, y2 - y1) * padding, then the narrower side
/// is widened to the input's aspect ratio, then the UDP warp matrix.
PoseCrop poseCropFor(const BoundingBox& box, InputSize size, float padding = kPoseBoxPadding);

/// cv::warpAffine of the whole image to the input size, zero border: bilinear when the crop is shrunk
/// (the official code asks for INTER_AREA, which warpAffine executes as INTER_LINEAR), bicubic when it
/// is enlarged.
cv::Mat warpPoseCrop(const cv::Mat& bgr, const PoseCrop& crop, InputSize size);

/// A point in input pixels back to image pixels, as the official decoder maps keypoints:
/// X = u / W_in * w + cx - w / 2 (float64; not the exact inverse of the warp, which uses W_in - 1).
std::array<double, 2> inputToImage(const std::array<double, 2>& inputPixel, const PoseCrop& crop,
                                   InputSize size);

}  // namespace sapiens
