#include "pipeline/preprocess.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <stdexcept>

namespace sapiens {
namespace {

void requireBgr8(const cv::Mat& bgr, const char* what) {
  if (bgr.empty() || bgr.type() != CV_8UC3) {
    throw std::invalid_argument(fmt::format("{}: expected a non-empty CV_8UC3 BGR image, got {}x{} type {}",
                                            what, bgr.cols, bgr.rows, bgr.type()));
  }
}

void requireInputSize(InputSize size, const char* what) {
  if (size.width <= 0 || size.height <= 0) {
    throw std::invalid_argument(fmt::format("{}: invalid input size {}x{}", what, size.width, size.height));
  }
}

/// normalised[c][v] = (v - mean_c) / std_c in float32, for every 8-bit value: the same float32
/// division the official preprocessor performs per pixel, done once per value.
struct NormalisationTable {
  std::array<std::array<float, 256>, 3> rgb{};
  NormalisationTable() {
    for (int c = 0; c < 3; ++c) {
      for (int v = 0; v < 256; ++v) {
        rgb[c][v] = (static_cast<float>(v) - kInputMeanRgb[c]) / kInputStdRgb[c];
      }
    }
  }
};

const NormalisationTable& normalisationTable() {
  static const NormalisationTable table;
  return table;
}

}  // namespace

void normalizeImageInto(const cv::Mat& bgr, const at::Tensor& batch, std::int64_t index) {
  requireBgr8(bgr, "normalizeImageInto");
  if (batch.dim() != 4 || batch.size(1) != 3 || batch.size(2) != bgr.rows || batch.size(3) != bgr.cols ||
      batch.scalar_type() != at::kFloat || !batch.device().is_cpu() || !batch.is_contiguous()) {
    throw std::invalid_argument(fmt::format(
        "normalizeImageInto: batch must be a contiguous float32 CPU tensor (B, 3, {}, {}), got {} {} on {}",
        bgr.rows, bgr.cols, fmt::join(batch.sizes(), "x"), c10::toString(batch.scalar_type()),
        batch.device().str()));
  }
  if (index < 0 || index >= batch.size(0)) {
    throw std::out_of_range(
        fmt::format("normalizeImageInto: slot {} outside a batch of {}", index, batch.size(0)));
  }
  const auto& table = normalisationTable().rgb;
  const std::int64_t plane = static_cast<std::int64_t>(bgr.rows) * bgr.cols;
  float* red = batch.data_ptr<float>() + index * 3 * plane;
  float* green = red + plane;
  float* blue = green + plane;
  for (int y = 0; y < bgr.rows; ++y) {
    const std::uint8_t* pixel = bgr.ptr<std::uint8_t>(y);
    const std::int64_t rowStart = static_cast<std::int64_t>(y) * bgr.cols;
    for (int x = 0; x < bgr.cols; ++x, pixel += 3) {
      blue[rowStart + x] = table[2][pixel[0]];
      green[rowStart + x] = table[1][pixel[1]];
      red[rowStart + x] = table[0][pixel[2]];
    }
  }
}

at::Tensor normalizeImage(const cv::Mat& bgr) {
  requireBgr8(bgr, "normalizeImage");
  at::Tensor input = at::empty({1, 3, bgr.rows, bgr.cols}, at::TensorOptions().dtype(at::kFloat));
  normalizeImageInto(bgr, input, 0);
  return input;
}

cv::Mat stretchToInput(const cv::Mat& bgr, InputSize size, StretchEnlarge enlarge) {
  requireBgr8(bgr, "stretchToInput");
  requireInputSize(size, "stretchToInput");
  const int interpolation = size.width < bgr.cols               ? cv::INTER_AREA
                            : enlarge == StretchEnlarge::Linear ? cv::INTER_LINEAR
                                                                : cv::INTER_CUBIC;
  cv::Mat resized;
  cv::resize(bgr, resized, cv::Size(size.width, size.height), 0, 0, interpolation);
  return resized;
}

Letterbox letterboxToInput(const cv::Mat& bgr, InputSize size) {
  requireBgr8(bgr, "letterboxToInput");
  requireInputSize(size, "letterboxToInput");
  // Python: scale = min(width / w, height / h); int(w * scale) - the same double arithmetic.
  const double scale =
      std::min(static_cast<double>(size.width) / bgr.cols, static_cast<double>(size.height) / bgr.rows);
  Letterbox result;
  // At least one pixel: a picture thinner than 1 / input size would otherwise vanish.
  result.contentWidth = std::clamp(static_cast<int>(bgr.cols * scale), 1, size.width);
  result.contentHeight = std::clamp(static_cast<int>(bgr.rows * scale), 1, size.height);
  const int padWidth = size.width - result.contentWidth;
  const int padHeight = size.height - result.contentHeight;
  result.padding.left = padWidth / 2;
  result.padding.right = padWidth - result.padding.left;
  result.padding.top = padHeight / 2;
  result.padding.bottom = padHeight - result.padding.top;
  // The picture is resized straight into its place in the input (no copy into a bordered one); only
  // the borders are filled with black.
  result.image.create(size.height, size.width, CV_8UC3);
  const cv::Rect content(result.padding.left, result.padding.top, result.contentWidth, result.contentHeight);
  result.image.rowRange(0, content.y).setTo(cv::Scalar::all(0));
  result.image.rowRange(content.y + content.height, size.height).setTo(cv::Scalar::all(0));
  result.image(cv::Rect(0, content.y, content.x, content.height)).setTo(cv::Scalar::all(0));
  result
      .image(cv::Rect(content.x + content.width, content.y, size.width - content.x - content.width,
                      content.height))
      .setTo(cv::Scalar::all(0));
  cv::Mat destination = result.image(content);
  cv::resize(bgr, destination, content.size(), 0, 0, cv::INTER_LINEAR);
  CV_Assert(destination.data == result.image.ptr(content.y, content.x));  // written in place
  return result;
}

}  // namespace sapiens
