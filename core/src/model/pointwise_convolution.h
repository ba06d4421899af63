#pragma once
// The heads' 1x1 convolutions of channels-last activations (NHWC in memory, as oneDNN's deconvolutions
// leave them) on AVX-512 CPUs: each pixel's output channels from its input channels with the weights in
// the core's cache, forward in one pass; backward in chunks of pixels, each chunk's input gradient and then
// its weights' and bias's gradient sums (outer_product_sums.h) while the chunk is in the cache. Tall, narrow
// matrix products (millions of pixels by 16-64 channels) are where BLAS spends its time packing and zeroing,
// and LibTorch 1.13's channels-last convolutions are slow backward.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// Whether pointwiseConvolution takes these: an AVX-512 CPU, x (B, C, H, W) channels-last (and not also
/// NCHW) float32 or bf16, weight (O, C, 1, 1) and bias (O, or undefined) float32 or bf16, C and O at most
/// 128, and it is the faster path (float32, or bf16 with C x O at most 64 x 32), SAPIENS_POINTWISE_CONV=0
/// not set.
bool pointwiseConvolutionApplies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

/// conv2d(x, weight, bias) with a 1x1 kernel, stride 1, no padding, summed in float32: channels-last in
/// x's dtype; differentiable with respect to x, weight and bias (their gradients in their own dtypes).
at::Tensor pointwiseConvolution(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

}  // namespace sapiens::detail
