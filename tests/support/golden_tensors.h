#pragma once
// Reading golden fixture tensors and comparing results with them, for the parity tests.

#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "sapiens/pipeline/input_size.h"

#include <ATen/ATen.h>
#include <opencv2/core/mat.hpp>

#include <stdexcept>
#include <string>

namespace sapiens::test {

/// A detached copy of the named tensor; throws naming the file when it is absent.
inline at::Tensor tensorOf(const sapiens::SafetensorsFile& file, const std::string& name) {
  const sapiens::TensorEntry* entry = file.find(name);
  if (!entry) throw std::runtime_error(file.path() + ": no tensor " + name);
  return sapiens::loadTensor(file, *entry).clone();
}

/// An H x W x C tensor holding a copy of an 8-bit or float image.
inline at::Tensor tensorOfMat(const cv::Mat& image) {
  return at::from_blob(image.data, {image.rows, image.cols, image.channels()},
                       image.depth() == CV_8U ? at::kByte : at::kFloat)
      .clone();
}

inline double maxAbsDifference(const at::Tensor& got, const at::Tensor& expected) {
  return (got.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
}

/// The official normal image (H x W x 3, shortened where it was interpolated) at unit length, as our
/// post-processing gives it: same directions, length 1.
inline at::Tensor unitLengthNormalImage(const at::Tensor& officialImage) {
  const at::Tensor n = officialImage.to(at::kDouble);
  return n / n.norm(2, {2}, /*keepdim=*/true).clamp_min(1e-12);
}

/// The (W, H) network input size of a (B, 3, H, W) input tensor.
inline sapiens::InputSize inputSizeOf(const at::Tensor& input) {
  return {static_cast<int>(input.size(3)), static_cast<int>(input.size(2))};
}

}  // namespace sapiens::test
