#pragma once
// The fused InstanceNorm + SiLU passes (instance_norm_silu.h) for channels-last tensors: NHWC in memory, as
// oneDNN's kernels read and write the heads' activations. Each pass reads every pixel's channels as one
// contiguous run; a sample's per-channel sums are added over blocks of pixels, in parallel.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// silu(instance_norm(x)) for a float32 or bf16 channels-last x (B, C, H, W), channels-last too; `stats`
/// becomes (B x C, 2) float32: each plane's mean and inverse standard deviation. AVX-512 CPUs only.
at::Tensor channelsLastNormSiluForward(const at::Tensor& x, double eps, at::Tensor& stats);

/// The gradient with respect to x of channelsLastNormSiluForward, channels-last, from x, its `stats` and
/// the gradient at the output (any layout).
at::Tensor channelsLastNormSiluBackward(const at::Tensor& x, const at::Tensor& stats,
                                        const at::Tensor& gradOutput);

}  // namespace sapiens::detail
