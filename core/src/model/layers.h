#pragma once
// The elementary layers of Sapiens2, as functions of tensors, with PyTorch's numerics.

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
/// y = x W^T + b for `<name>.weight` / `<name>.bias` (bias optional).
at::Tensor linear(const at::Tensor& x, const ParameterAccess& p, const std::string& name);
/// Conv2d with `<name>.weight` / `<name>.bias`, padding (k-1)/2.
at::Tensor conv2d(const at::Tensor& x, const ParameterAccess& p, const std::string& name, int stride = 1);
/// ConvTranspose2d stride 2 without bias; padding/output padding from the kernel size (4: 1/0, 3: 1/1, 2:
/// 0/0).
at::Tensor deconv2d(const at::Tensor& x, const at::Tensor& weight);

}  // namespace sapiens::detail
