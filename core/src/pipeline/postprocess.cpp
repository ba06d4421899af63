#include "pipeline/postprocess.h"

#include "pipeline/seg_argmax.h"
#include "sapiens/common/log.h"
#ifdef SAPIENS_HAVE_CUDA_KERNELS
#include "cuda/torch_kernels.h"
#endif

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace sapiens {
namespace {

std::string shapeText(const at::Tensor& t) {
  return fmt::format("({})", fmt::join(t.sizes(), ", "));
}

void requireSingleMap(const at::Tensor& map, const char* what, std::int64_t channels = -1) {
  if (map.dim() != 4 || map.size(0) != 1 || (channels > 0 && map.size(1) != channels) || map.size(2) < 1 ||
      map.size(3) < 1) {
    throw std::invalid_argument(fmt::format("{}: expected a (1, {}, h, w) map, got {}", what,
                                            channels > 0 ? std::to_string(channels) : "C", shapeText(map)));
  }
}

void requireImageSize(cv::Size size, const char* what) {
  if (size.width <= 0 || size.height <= 0) {
    throw std::invalid_argument(fmt::format("{}: invalid image size {}x{}", what, size.width, size.height));
  }
}

}  // namespace

at::Tensor batchItem(const at::Tensor& output, std::int64_t index) {
  if (output.dim() == 3) {
    if (index != 0) throw std::out_of_range(fmt::format("batchItem: item {} of an unbatched map", index));
    return output.unsqueeze(0);
  }
  if (output.dim() != 4) {
    throw std::invalid_argument(fmt::format("batchItem: expected (B, C, h, w), got {}", shapeText(output)));
  }
  if (index < 0 || index >= output.size(0)) {
    throw std::out_of_range(fmt::format("batchItem: item {} outside a batch of {}", index, output.size(0)));
  }
  return output.narrow(0, index, 1);
}

at::Tensor resizeBilinear(const at::Tensor& map, cv::Size size) {
  requireSingleMap(map, "resizeBilinear");
  requireImageSize(size, "resizeBilinear");
  const at::Tensor input = map.scalar_type() == at::kFloat ? map : map.to(at::kFloat);
  return at::upsample_bilinear2d(input, {size.height, size.width}, /*align_corners=*/false);
}

at::Tensor upsampleSegLogits(const at::Tensor& logits, cv::Size imageSize) {
  requireSingleMap(logits, "upsampleSegLogits");
  return resizeBilinear(logits, imageSize);
}

namespace {

/// The reference path: the whole (1, C, H, W) upsampled map on the logits' device, argmax(1), uint8 to
/// the host. Kept for probabilities and for devices without a fused kernel.
SegResult segLabelsUpsampled(const at::Tensor& logits, cv::Size imageSize, bool withProbabilities) {
  const at::Tensor upsampled = upsampleSegLogits(logits, imageSize);
  // argmax returns the first maximal index, as numpy/torch do in the official script.
  const at::Tensor labels = upsampled.argmax(1).squeeze(0).to(at::kByte).contiguous().to(at::kCPU);
  SegResult result;
  result.labels = cv::Mat(imageSize, CV_8UC1);
  std::memcpy(result.labels.data, labels.data_ptr<std::uint8_t>(), static_cast<std::size_t>(labels.numel()));
  if (withProbabilities) {
    result.probabilities = upsampled.softmax(1).squeeze(0).contiguous().to(at::kCPU);
  }
  return result;
}

}  // namespace

SegResult segLabels(const at::Tensor& logits, cv::Size imageSize, bool withProbabilities) {
  requireSingleMap(logits, "segLabels");
  requireImageSize(imageSize, "segLabels");
  if (logits.size(1) > 256) {
    throw std::invalid_argument(fmt::format("segLabels: {} classes do not fit 8-bit labels (logits {})",
                                            logits.size(1), shapeText(logits)));
  }
  const std::int64_t classes = logits.size(1);
  const bool fusedMatches = classes == 1 || detail::fusedArgmaxMatchesAten(static_cast<int>(logits.size(2)),
                                                                           static_cast<int>(logits.size(3)),
                                                                           imageSize.height, imageSize.width);
  if (!withProbabilities && logits.device().is_cpu() && fusedMatches) {
    // Fused upsampling + argmax, row by row: O(C x W) memory per thread instead of C x H x W floats
    // (960 MB for 29 classes at 3840x2160), the same labels (same rounding as upsample_bilinear2d).
    const at::Tensor input = logits.to(at::kFloat).contiguous();
    SegResult result;
    result.labels = cv::Mat(imageSize, CV_8UC1);
    detail::upsampleArgmax(input.data_ptr<float>(), static_cast<int>(classes),
                           static_cast<int>(input.size(2)), static_cast<int>(input.size(3)), imageSize.height,
                           imageSize.width, result.labels.data, result.labels.step[0],
                           detail::atenBilinearRounding());
    return result;
  }
#ifdef SAPIENS_HAVE_CUDA_KERNELS
  static std::atomic<bool> kernelUnavailable{false};
  if (!withProbabilities && logits.is_cuda() && !kernelUnavailable) {
    // Fused kernel on the logits' stream; only the uint8 mask is copied back. A GPU this build has no
    // code for (see CMAKE_CUDA_ARCHITECTURES) falls back to ATen's path, once said.
    try {
      const at::Tensor labels = cuda::upsampleArgmaxLabels(logits, imageSize.height, imageSize.width);
      SegResult result;
      result.labels = cv::Mat(imageSize, CV_8UC1);
      std::memcpy(result.labels.data, labels.data_ptr<std::uint8_t>(),
                  static_cast<std::size_t>(labels.numel()));
      return result;
    } catch (const std::exception& e) {
      if (!kernelUnavailable.exchange(true))
        logger().warn("the fused segmentation kernel cannot run here ({}); using ATen's upsampling",
                      e.what());
    }
  }
#endif
  return segLabelsUpsampled(logits, imageSize, withProbabilities);
}

namespace {

struct NormalsWithLength {
  at::Tensor normals;  // (B, 3, h, w) float
  at::Tensor length;   // (B, 1, h, w)
};

NormalsWithLength withLength(const at::Tensor& normals, const char* what) {
  if (normals.dim() != 4 || normals.size(1) != 3)
    throw std::invalid_argument(fmt::format("{}: expected (B, 3, h, w), got {}", what, shapeText(normals)));
  at::Tensor n = normals.scalar_type() == at::kFloat ? normals : normals.to(at::kFloat);
  const auto lengthOf = [](const at::Tensor& v) {
    return at::linalg_vector_norm(v, 2, at::IntArrayRef{1}, /*keepdim=*/true, c10::nullopt);
  };
  at::Tensor length = lengthOf(n);
  // Components so large that their squares overflow (a checkpoint with huge weights) still point
  // somewhere: those vectors are scaled by their largest component first. Others are left bit for bit.
  const at::Tensor overflowed = at::isinf(length).logical_and_(at::isfinite(n).all(1, /*keepdim=*/true));
  if (overflowed.any().item<bool>()) {
    n = at::where(overflowed, n / n.abs().amax(1, /*keepdim=*/true), n);
    length = lengthOf(n);
  }
  return {n, length};
}

}  // namespace

at::Tensor unitNormals(const at::Tensor& normals) {
  const NormalsWithLength n = withLength(normals, "unitNormals");
  return n.normals / n.length.clamp_min(1e-8);
}

at::Tensor cropPadding(const at::Tensor& map, const Padding& padding) {
  requireSingleMap(map, "cropPadding");
  const std::int64_t height = map.size(2) - padding.top - padding.bottom;
  const std::int64_t width = map.size(3) - padding.left - padding.right;
  if (padding.left < 0 || padding.right < 0 || padding.top < 0 || padding.bottom < 0 || height < 1 ||
      width < 1) {
    throw std::invalid_argument(
        fmt::format("cropPadding: padding [left {}, right {}, top {}, bottom {}] does not "
                    "fit a map {}",
                    padding.left, padding.right, padding.top, padding.bottom, shapeText(map)));
  }
  return map.narrow(2, padding.top, height).narrow(3, padding.left, width);
}

cv::Mat toImageMat(const at::Tensor& map) {
  requireSingleMap(map, "toImageMat", 3);
  // Straight into the picture's memory: at the picture's size a map is 12 bytes a pixel (3 GB at
  // 16000 x 16000), and a contiguous copy first would double that.
  cv::Mat image(static_cast<int>(map.size(2)), static_cast<int>(map.size(3)), CV_32FC3);
  at::from_blob(image.data, {image.rows, image.cols, 3}, at::TensorOptions().dtype(at::kFloat))
      .copy_(map.squeeze(0).permute({1, 2, 0}));
  return image;
}

namespace {

// resampledUnitNormals on a float32 map the caller hands over: divided in place (a full-size map is
// never copied for it).
at::Tensor unitNormalsInPlace(at::Tensor normals) {
  NormalsWithLength n = withLength(normals, "resampledUnitNormals");
  const at::Tensor invalid = at::logical_not(n.length > kInvalidNormalLength);  // NaN lengths included
  n.normals.div_(n.length.clamp_min_(kInvalidNormalLength));
  return n.normals.masked_fill_(invalid, 0.0);
}

}  // namespace

at::Tensor resampledUnitNormals(const at::Tensor& normals) {
  return unitNormalsInPlace(normals.scalar_type() == at::kFloat ? normals.clone() : normals.to(at::kFloat));
}

namespace {

// resampledUnitNormals of a contiguous float32 (1, 3, H, W) CPU map, written as an H x W CV_32FC3
// picture in one parallel pass with the arithmetic ATen's ops do: the squares summed in float by fused
// multiply-adds (as ATen's vectorised CPU kernels, compiled with contraction, do), a length that
// overflows float taken again after dividing by the largest component, then the division in float. ATen's
// norm over three channels ran for 45 s at 16000 x 16000, and each op kept a full-size temporary.
cv::Mat unitNormalsImage(const at::Tensor& map) {
  const std::int64_t height = map.size(2), width = map.size(3), plane = height * width;
  cv::Mat image(static_cast<int>(height), static_cast<int>(width), CV_32FC3);
  const float* in = map.data_ptr<float>();
  auto* out = reinterpret_cast<float*>(image.data);
  const auto lengthOf = [](const float* v) {
    float sum = 0.0f;
    for (int c = 0; c < 3; ++c) sum = std::fma(v[c], v[c], sum);
    return std::sqrt(sum);
  };
  const float smallest = static_cast<float>(kInvalidNormalLength);
  at::parallel_for(0, plane, 16384, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      float v[3] = {in[i], in[plane + i], in[2 * plane + i]};
      float length = lengthOf(v);
      if (std::isinf(length) && std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2])) {
        const float largest = std::max({std::abs(v[0]), std::abs(v[1]), std::abs(v[2])});
        for (float& c : v) c /= largest;
        length = lengthOf(v);
      }
      const bool valid = length > smallest;
      const float divisor = std::max(length, smallest);
      for (int c = 0; c < 3; ++c) out[3 * i + c] = valid ? v[c] / divisor : 0.0f;
    }
  });
  return image;
}

}  // namespace

cv::Mat normalImage(const at::Tensor& normals, const Padding& padding, cv::Size imageSize) {
  requireSingleMap(normals, "normalImage", 3);
  const at::Tensor resampled = resizeBilinear(cropPadding(unitNormals(normals), padding), imageSize);
  if (resampled.is_cpu()) return unitNormalsImage(resampled.contiguous());
  return toImageMat(unitNormalsInPlace(resampled));
}

Matte matteImage(const at::Tensor& matting, cv::Size imageSize) {
  requireSingleMap(matting, "matteImage");
  const std::int64_t channels = matting.size(1);
  if (channels != 1 && channels != 4) {
    throw std::invalid_argument(fmt::format(
        "matteImage: a matting output has 4 channels (foreground RGB, alpha) or 1 (alpha), got {}",
        shapeText(matting)));
  }
  const at::Tensor resized = resizeBilinear(matting, imageSize).clamp_(0.0, 1.0);
  Matte matte;
  matte.alpha = cv::Mat(imageSize, CV_32FC1);
  at::from_blob(matte.alpha.data, {imageSize.height, imageSize.width}, at::TensorOptions().dtype(at::kFloat))
      .copy_(resized[0][channels - 1]);
  if (channels == 4) matte.foreground = toImageMat(resized.narrow(1, 0, 3));
  return matte;
}

cv::Mat albedoImage(const at::Tensor& albedo, const Padding& padding, cv::Size imageSize) {
  requireSingleMap(albedo, "albedoImage", 3);
  return toImageMat(resizeBilinear(cropPadding(albedo.to(at::kFloat).clamp(0.0, 1.0), padding), imageSize));
}

at::Tensor gaussianBlur3x3(const at::Tensor& map, double sigma) {
  requireSingleMap(map, "gaussianBlur3x3");
  if (map.size(2) < 2 || map.size(3) < 2) {
    throw std::invalid_argument(fmt::format(
        "gaussianBlur3x3: reflect padding needs a map of at least 2 x 2, got {}", shapeText(map)));
  }
  const at::TensorOptions options = map.options().dtype(at::kFloat);
  // torchvision: x = linspace(-1, 1, 3); pdf = exp(-0.5 (x / sigma)^2); normalised; outer product.
  const at::Tensor x = at::linspace(-1.0, 1.0, 3, options);
  const at::Tensor pdf = at::exp(-0.5 * (x / sigma).pow(2));
  const at::Tensor kernel1d = pdf / pdf.sum();
  const at::Tensor kernel2d = at::mm(kernel1d.unsqueeze(1), kernel1d.unsqueeze(0));
  const std::int64_t channels = map.size(1);
  const at::Tensor weight = kernel2d.expand({channels, 1, 3, 3});
  const at::Tensor padded = at::reflection_pad2d(map.to(at::kFloat), {1, 1, 1, 1});
  return at::conv2d(padded, weight, /*bias=*/at::Tensor(), /*stride=*/at::IntArrayRef{1},
                    /*padding=*/at::IntArrayRef{0},
                    /*dilation=*/at::IntArrayRef{1}, channels);
}

at::Tensor metricPointmap(const at::Tensor& canonical, const at::Tensor& scale) {
  if (canonical.dim() != 4 || canonical.size(1) != 3 || scale.numel() != canonical.size(0)) {
    throw std::invalid_argument(
        fmt::format("metricPointmap: expected pointmaps (B, 3, h, w) and scales (B, 1), "
                    "got {} and {}",
                    shapeText(canonical), shapeText(scale)));
  }
  return canonical /
         scale.to(canonical.device(), canonical.scalar_type()).reshape({canonical.size(0), 1, 1, 1});
}

cv::Mat pointmapImage(const at::Tensor& metric, const Padding& padding, cv::Size imageSize) {
  requireSingleMap(metric, "pointmapImage", 3);
  requireImageSize(imageSize, "pointmapImage");
  at::Tensor map = cropPadding(metric.to(at::kFloat), padding);
  if (imageSize.height > map.size(2) || imageSize.width > map.size(3)) {
    for (int iteration = 0; iteration < 4; ++iteration) map = gaussianBlur3x3(map);
  }
  return toImageMat(resizeBilinear(map, imageSize));
}

Intrinsics intrinsicsFromScale(double scale, const Padding& padding, InputSize inputSize,
                               cv::Size imageSize) {
  const int contentWidth = inputSize.width - padding.left - padding.right;
  const int contentHeight = inputSize.height - padding.top - padding.bottom;
  if (!std::isfinite(scale) || scale <= 0.0) {
    throw std::invalid_argument(
        fmt::format("intrinsicsFromScale: the pointmap scale {} is not positive", scale));
  }
  if (contentWidth < 1 || contentHeight < 1 || imageSize.width < 1 || imageSize.height < 1) {
    throw std::invalid_argument(
        fmt::format("intrinsicsFromScale: padding [{}, {}, {}, {}] leaves no picture in a "
                    "{}x{} input (image {}x{})",
                    padding.left, padding.right, padding.top, padding.bottom, inputSize.width,
                    inputSize.height, imageSize.width, imageSize.height));
  }
  const double focalInput = kCanonicalFocalPx / scale;
  const double ratioX = static_cast<double>(contentWidth) / imageSize.width;
  const double ratioY = static_cast<double>(contentHeight) / imageSize.height;
  const double centreX = (inputSize.width - 1) / 2.0;
  const double centreY = (inputSize.height - 1) / 2.0;
  Intrinsics k;
  k.fx = focalInput / ratioX;
  k.fy = focalInput / ratioY;
  k.cx = (centreX - padding.left + 0.5) / ratioX - 0.5;
  k.cy = (centreY - padding.top + 0.5) / ratioY - 0.5;
  return k;
}

}  // namespace sapiens
