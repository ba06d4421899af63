#pragma once
// LibTorch front of the custom CUDA kernels (kernels.h), compiled only when the LibTorch has CUDA and the
// kernels were built (SAPIENS_HAVE_CUDA_KERNELS). Work runs on the tensors' device, on the current stream.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <utility>

namespace sapiens::cuda {

/// (B, C, h, w) CUDA logits (float32, bfloat16, float16) -> (B, height, width) uint8 labels on the host:
/// fused bilinear upsampling (align_corners = false) + first argmax, only the labels copied back.
at::Tensor upsampleArgmaxLabels(const at::Tensor& logits, std::int64_t height, std::int64_t width);

/// (B, K, h, w) CUDA heatmaps -> (B, K) int32 row-major peak indices and (B, K) float32 peak values,
/// on the device (first maximum, NaN = maximum, as numpy).
std::pair<at::Tensor, at::Tensor> heatmapPeaks(const at::Tensor& heatmaps);

/// (3, H, W) CUDA pointmap + optional (H, W) uint8 CUDA mask (undefined tensor: none) -> (N, 3) float32
/// vertices on the host: the finite, unmasked points in row-major pixel order.
at::Tensor pointmapVertices(const at::Tensor& pointmap, const at::Tensor& mask);

}  // namespace sapiens::cuda
