#include "layers.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>

namespace sapiens::detail {

bool cpuGemmRoundsSums(const at::Tensor& x) {
  if (!x.is_cpu() || (x.scalar_type() != at::kBFloat16 && x.scalar_type() != at::kHalf)) return false;
  // LibTorch's own test (mkldnn_bf16_device_check) asks for AVX-512 BW, VL and DQ; hasAvx512 includes them.
  static const bool oneDnnBf16 = at::hasMKLDNN() && cpu::hasAvx512();
  return !(oneDnnBf16 && at::globalContext().userEnabledMkldnn());
}

at::Tensor conv2dSummingInFloat(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                at::IntArrayRef stride, at::IntArrayRef padding) {
  if (!cpuGemmRoundsSums(x)) return at::conv2d(x, weight, bias, stride, padding);
  return at::conv2d(x.to(at::kFloat), weight.to(at::kFloat), bias.defined() ? bias.to(at::kFloat) : bias,
                    stride, padding)
      .to(x.scalar_type());
}

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::Tensor upcast = x.to(at::kFloat);
  const at::Tensor inverseRms = at::rsqrt(upcast.pow(2).mean({-1}, /*keepdim=*/true).add(eps));
  return upcast.mul(inverseRms).to(x.scalar_type()).mul(weight);
}

at::Tensor rmsNorm2d(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return rmsNorm(x.permute({0, 2, 3, 1}), weight, eps).permute({0, 3, 1, 2});
}

at::Tensor instanceNorm(const at::Tensor& x, double eps) {
  return at::instance_norm(x, /*weight=*/{}, /*bias=*/{}, /*running_mean=*/{}, /*running_var=*/{},
                           /*use_input_stats=*/true, /*momentum=*/0.1, eps,
                           at::globalContext().userEnabledCuDNN());
}

at::Tensor linear(const at::Tensor& x, const ParameterAccess& p, const std::string& name) {
  return at::linear(x, p(name + ".weight"), p.optional(name + ".bias"));
}

at::Tensor conv2d(const at::Tensor& x, const ParameterAccess& p, const std::string& name, int stride) {
  const at::Tensor& weight = p(name + ".weight");
  const int64_t padding = (weight.size(2) - 1) / 2;
  return conv2dSummingInFloat(x, weight, p.optional(name + ".bias"), {stride, stride}, {padding, padding});
}

at::Tensor deconv2d(const at::Tensor& x, const at::Tensor& weight) {
  const int64_t kernel = weight.size(2);
  const int64_t padding = kernel == 2 ? 0 : 1;
  const int64_t outputPadding = kernel == 3 ? 1 : 0;
  if (x.is_cpu() && x.scalar_type() != at::kFloat) {
    // LibTorch 1.13 sends reduced-precision transposed convolutions on the CPU to the wrong oneDNN kernel
    // (it fails with a channel-count error); compute those in float32.
    return at::conv_transpose2d(x.to(at::kFloat), weight.to(at::kFloat), /*bias=*/{}, {2, 2},
                                {padding, padding}, {outputPadding, outputPadding})
        .to(x.scalar_type());
  }
  return at::conv_transpose2d(x, weight, /*bias=*/{}, {2, 2}, {padding, padding},
                              {outputPadding, outputPadding});
}

}  // namespace sapiens::detail
