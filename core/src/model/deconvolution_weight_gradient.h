#pragma once
// The weight gradient of the heads' 4x4, stride-2, padding-1 transposed convolutions in float32 as BLAS
// matrix products. Each output pixel of parity (a, b) (row 2m + a, column 2n + b) reads two input rows
// and two input columns, so the gradient of each of the 16 taps is a product of shifted input pixels and
// the output gradient's pixels of one parity; taken over blocks of rows, with a parity's four taps as one
// product, these are products that BLAS runs near its rate, where oneDNN's float32 deconvolution kernel
// for this pass runs at about two thirds of it (PERFORMANCE.md).

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// Whether deconvolutionWeightGradient is the faster path for this layer: float32 x (B, in, H, W) and
/// output gradient (B, out, 2H, 2W), both channels-last, kernel 4, padding 1, no output padding, at least
/// 256 output channels (narrower layers are as fast or faster on oneDNN's kernel), and
/// SAPIENS_DECONV_WEIGHT_PRODUCTS=0 not set.
bool deconvolutionWeightGradientApplies(const at::Tensor& x, const at::Tensor& gradOutput, int64_t kernel,
                                        int64_t padding, int64_t outputPadding);

/// d loss / d weight (in, out, 4, 4), float32, of ConvTranspose2d(stride 2, padding 1) at input x.
at::Tensor deconvolutionWeightGradient(const at::Tensor& x, const at::Tensor& gradOutput);

}  // namespace sapiens::detail
