#pragma once
// The elementary layers of Sapiens2, as functions of tensors, with PyTorch's numerics.

#include "onednn_matmul.h"
#include "parameter_access.h"

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

inline constexpr double kRmsNormEps = 1e-6;
inline constexpr double kInstanceNormEps = 1e-5;

/// torch.nn.functional.rms_norm's composite over the last dimension: upcast to float,
/// x * rsqrt(mean(x^2) + eps), cast back, then * weight.
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps = kRmsNormEps);
/// RMSNorm over the channels of an NCHW tensor (AlbedoHead's RMSNorm2d).
at::Tensor rmsNorm2d(const at::Tensor& x, const at::Tensor& weight, double eps = kRmsNormEps);
/// InstanceNorm2d without affine parameters or running statistics.
at::Tensor instanceNorm(const at::Tensor& x, double eps = kInstanceNormEps);
/// silu(instanceNorm(x)): one fused pass on AVX-512 CPUs (instance_norm_silu.h), else the composite.
at::Tensor instanceNormSilu2d(const at::Tensor& x, double eps = kInstanceNormEps);
/// Whether LibTorch would round the sums of `x`'s matrix products to its dtype: bf16 (or fp16) on the CPU
/// where oneDNN does not take them (its bf16 kernels need AVX-512 BW/VL/DQ). LibTorch 1.13's generic CPU
/// GEMM then accumulates in bf16 in three of its four operand layouts, the im2col convolutions included
/// (max error 7 % at K = 576, 10 % at K = 3072, 25 % at K = 12288, measured on an AVX2 EPYC); only
/// C = A B with A row-major and B column-major (at::linear's x W^T) sums in float32 (0.2-0.3 %, the
/// operands' and result's rounding). Products of such tensors use that layout or float32.
bool cpuGemmRoundsSums(const at::Tensor& x);
/// at::conv2d; computed in float32 and rounded back to x's dtype where cpuGemmRoundsSums(x).
at::Tensor conv2dSummingInFloat(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                at::IntArrayRef stride, at::IntArrayRef padding);
/// y = epilogue(x W^T + b) for `<name>.weight` / `<name>.bias` (bias optional): oneDNN's bf16 matmul with
/// the epilogue fused where it applies (onednn_matmul.h), else at::linear and ATen ops.
at::Tensor linear(const at::Tensor& x, const ParameterAccess& p, const std::string& name,
                  const MatmulEpilogue& epilogue = {});
/// Conv2d with `<name>.weight` / `<name>.bias`, padding (k-1)/2.
at::Tensor conv2d(const at::Tensor& x, const ParameterAccess& p, const std::string& name, int stride = 1);
/// ConvTranspose2d stride 2 without bias; padding/output padding from the kernel size (4: 1/0, 3: 1/1, 2:
/// 0/0). On the CPU through oneDNN's deconvolution where it applies (onednn_deconvolution.h), in bf16 for
/// bf16 operands or under bf16 autocast on CPUs with native bf16.
at::Tensor deconv2d(const at::Tensor& x, const at::Tensor& weight);

}  // namespace sapiens::detail
