#pragma once
// The weight gradient of the heads' 4x4, stride-2, padding-1 transposed convolutions in float32: for each
// of the 16 taps and input row, the sums of outer products of the row's input pixels and the output
// gradient's pixels they meet (outer_product_sums.h, a tile of the sums in registers). Channels-last input
// and output gradient make both operands plain strided rows. oneDNN's float32 kernel for this pass runs at
// about 60 % of the GEMM floor for the narrow layers (128 -> 64, 256 -> 128), where this one runs near the
// floor; at 1024 -> 512 the two are level (PERFORMANCE.md).

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// Whether deconvolutionWeightGradient takes this layer: float32 x (B, in, H, W) and output gradient
/// (B, out, 2H, 2W), both channels-last, kernel 4, padding 1, no output padding, a CPU with AVX-512, and
/// SAPIENS_DECONV_WEIGHT_KERNEL=0 not set.
bool deconvolutionWeightGradientApplies(const at::Tensor& x, const at::Tensor& gradOutput, int64_t kernel,
                                        int64_t padding, int64_t outputPadding);

/// d loss / d weight (in, out, 4, 4), float32, of ConvTranspose2d(stride 2, padding 1) at input x.
at::Tensor deconvolutionWeightGradient(const at::Tensor& x, const at::Tensor& gradOutput);

}  // namespace sapiens::detail
