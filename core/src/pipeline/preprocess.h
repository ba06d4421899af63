#pragma once
// Turning a picture into network input exactly as the official demo scripts do: a geometric transform
// of the 8-bit BGR image (task-specific), then one pass that converts BGR to RGB and normalises with the
// ImageNet statistics (0-255 scale) straight into the input tensor's memory.

#include "sapiens/pipeline/input_size.h"

#include <ATen/core/Tensor.h>
#include <opencv2/core/mat.hpp>

#include <array>
#include <cstdint>

namespace sapiens {

/// RGB order, 0-255 scale, as the official ImagePreprocessor uses them.
inline constexpr std::array<float, 3> kInputMeanRgb{123.675f, 116.28f, 103.53f};
inline constexpr std::array<float, 3> kInputStdRgb{58.395f, 57.12f, 57.375f};

/// (1, 3, H, W) float32 CPU tensor of a CV_8UC3 BGR image: channel c = (rgb_c - mean_c) / std_c,
/// computed in float32 exactly as the official preprocessor does. Throws std::invalid_argument for
/// another image type.
at::Tensor normalizeImage(const cv::Mat& bgr);

/// The same, written into slot `index` of `batch`: a contiguous float32 CPU tensor (B, 3, H, W) whose
/// H and W equal the image's.
void normalizeImageInto(const cv::Mat& bgr, const at::Tensor& batch, std::int64_t index);

/// How a stretch enlarges: the official seg resize uses INTER_CUBIC, the matting one INTER_LINEAR.
enum class StretchEnlarge { Cubic, Linear };

/// Segmentation and matting: resize to the input size ignoring the aspect ratio. INTER_AREA when the
/// input is narrower than the image, else `enlarge` (the official rules look at the width only).
cv::Mat stretchToInput(const cv::Mat& bgr, InputSize size, StretchEnlarge enlarge = StretchEnlarge::Cubic);

/// Black borders added around the resized picture, in input pixels.
struct Padding {
  int left = 0;
  int right = 0;
  int top = 0;
  int bottom = 0;

  bool operator==(const Padding& other) const {
    return left == other.left && right == other.right && top == other.top && bottom == other.bottom;
  }
};

/// The aspect-preserving resize with centred black padding used by normal, albedo and pointmap.
struct Letterbox {
  cv::Mat image;         ///< CV_8UC3, exactly the input size
  Padding padding;       ///< left = pad_w / 2, top = pad_h / 2 (the smaller halves)
  int contentWidth = 0;  ///< size of the resized picture inside the padding
  int contentHeight = 0;
};

/// s = min(W_in / W, H_in / H); the picture is resized (INTER_LINEAR) to int(W * s) x int(H * s),
/// truncated, then padded with zeros to the input size.
Letterbox letterboxToInput(const cv::Mat& bgr, InputSize size);

}  // namespace sapiens
