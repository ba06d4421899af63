#pragma once
// The heads' stride-2 transposed convolutions on the CPU through oneDNN's deconvolution primitive
// (libdnnl) directly, forward and backward. LibTorch 1.13 has no oneDNN path for a CPU transposed
// convolution (im2col plus col2im instead); its 3x3 sub-pixel rewrite multiplies 2.25x the taps. oneDNN's
// kernels compute the taps that exist, in float32, or in bf16 (float32 sums) on CPUs with native bf16.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// Whether oneDnnDeconvolution takes these: oneDNN was built in, SAPIENS_ONEDNN_DECONV=0 does not turn it
/// off, x (B, in, H, W) and weight (in, out, k, k) are float32 or bf16 CPU tensors.
bool oneDnnDeconvolutionApplies(const at::Tensor& x, const at::Tensor& weight);

/// ConvTranspose2d(stride 2, `padding`, `outputPadding`, no bias) of x, differentiable with respect to x
/// and weight. Computed in bf16 where x or weight is bf16 or CPU autocast to bf16 is on, and oneDNN runs
/// bf16 natively (float32 otherwise); the result is bf16 when computed in bf16, and channels-last (NHWC in
/// memory: the kernels read and write that layout, an NCHW x is converted first); gradients come back in
/// their inputs' dtypes (a float32 weight's gradient is summed in float32). Returns an undefined tensor
/// when oneDNN offers only its reference kernel for the shapes.
at::Tensor oneDnnDeconvolution(const at::Tensor& x, const at::Tensor& weight, int64_t padding,
                               int64_t outputPadding);

}  // namespace sapiens::detail
