#pragma once
// The heads' InstanceNorm2d (no affine parameters) followed by SiLU as one pass on CPUs with AVX-512, for
// float32 and bf16 tensors, NCHW or channels-last (NHWC in memory, instance_norm_silu_channels_last.h): each
// plane's statistics in one read, the normalised and activated plane in one read and one write, float32 math
// with one rounding to bf16. Its gradient is two passes over the input and the output gradient, and it keeps
// only the input for the backward pass. LibTorch's composite (batch_norm over a reshaped view, then silu)
// makes two full-size tensors forward, keeps both, and takes four passes backward: at the seg head's full
// resolution (B x 64 x 1024 x 768) these passes, bound by memory traffic, were a large part of a fine-tuning
// step.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// Whether instanceNormSilu takes x: a 4-D float32 or bf16 CPU tensor with elements, an AVX-512 CPU, and
/// SAPIENS_FUSED_INSTANCE_NORM=0 not set.
bool instanceNormSiluApplies(const at::Tensor& x);

/// silu(instance_norm(x, eps)) in x's dtype and memory layout (channels-last stays so, any other becomes
/// NCHW-contiguous), differentiable with respect to x. NaN and infinity in a plane
/// make that plane's output NaN, as the composite does.
at::Tensor instanceNormSilu(const at::Tensor& x, double eps);

}  // namespace sapiens::detail
