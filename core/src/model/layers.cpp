#include "layers.h"

#include "channels_last.h"
#include "instance_norm_silu.h"
#include "norm_rope_bf16.h"
#include "onednn_deconvolution.h"
#include "pointwise_convolution.h"

#include "sapiens/common/cpu_features.h"
#include "sapiens/model/linear_product.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace sapiens::detail {

bool cpuGemmRoundsSums(const at::Tensor& x) {
  if (!x.is_cpu() || (x.scalar_type() != at::kBFloat16 && x.scalar_type() != at::kHalf)) return false;
  // LibTorch's own test (mkldnn_bf16_device_check) asks for AVX-512 BW, VL and DQ; hasAvx512 includes them.
  static const bool oneDnnBf16 = at::hasMKLDNN() && cpu::hasAvx512();
  return !(oneDnnBf16 && at::globalContext().userEnabledMkldnn());
}

namespace {

// A 1x1 convolution of a channels-last CPU tensor (NHWC in memory, as oneDNN's deconvolutions leave the
// heads' activations) is a matrix product over its pixels' channel rows: LibTorch 1.13's own channels-last
// convolutions are slow backward, and in bf16 its NCHW ones are slow both ways.
bool isPixelwiseProduct(const at::Tensor& x, const at::Tensor& weight, at::IntArrayRef stride,
                        at::IntArrayRef padding) {
  const auto ones = [](at::IntArrayRef v) {
    return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 1; });
  };
  const auto zeros = [](at::IntArrayRef v) {
    return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 0; });
  };
  return x.is_cpu() && x.dim() == 4 && weight.dim() == 4 && weight.size(2) == 1 && weight.size(3) == 1 &&
         ones(stride) && zeros(padding) && isChannelsLastOnly(x);
}

}  // namespace

at::Tensor conv2dSummingInFloat(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                                at::IntArrayRef stride, at::IntArrayRef padding) {
  if (isPixelwiseProduct(x, weight, stride, padding)) {
    if (pointwiseConvolutionApplies(x, weight, bias)) return pointwiseConvolution(x, weight, bias);
    const at::Tensor rows = x.permute({0, 2, 3, 1});
    // x W^T sums in float32 in every dtype, but its backward's weight gradient (a sum over every pixel)
    // sums bf16 in bf16 where the CPU's GEMM rounds its sums (no AVX-512: 3-5 % off in fine-tuning's
    // heads), so there the product runs in float32. The result is channels-last as x is.
    if (cpuGemmRoundsSums(x)) {
      const at::Tensor floatBias = bias.defined() ? bias.to(at::kFloat) : bias;
      return linearBestPath(rows.to(at::kFloat), weight.flatten(1).to(at::kFloat), floatBias)
          .to(x.scalar_type())
          .permute({0, 3, 1, 2});
    }
    return linearBestPath(rows, weight.flatten(1), bias).permute({0, 3, 1, 2});
  }
  if (!cpuGemmRoundsSums(x)) return at::conv2d(x, weight, bias, stride, padding);
  return at::conv2d(x.to(at::kFloat), weight.to(at::kFloat), bias.defined() ? bias.to(at::kFloat) : bias,
                    stride, padding)
      .to(x.scalar_type());
}

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  if (fusedNormApplies(x, weight)) return rmsNormBf16(x, weight, eps);
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

at::Tensor instanceNormSilu2d(const at::Tensor& x, double eps) {
  if (instanceNormSiluApplies(x)) return instanceNormSilu(x, eps);
  return at::silu(instanceNorm(x, eps));
}

at::Tensor linear(const at::Tensor& x, const ParameterAccess& p, const std::string& name,
                  const MatmulEpilogue& epilogue) {
  return linearBestPath(x, p(name + ".weight"), p.optional(name + ".bias"), epilogue);
}

at::Tensor conv2d(const at::Tensor& x, const ParameterAccess& p, const std::string& name, int stride) {
  const at::Tensor& weight = p(name + ".weight");
  const int64_t padding = (weight.size(2) - 1) / 2;
  return conv2dSummingInFloat(x, weight, p.optional(name + ".bias"), {stride, stride}, {padding, padding});
}

namespace {

// A 4x4 stride-2 transposed convolution's weight (in, out, 4, 4) as the weight (4 out, in, 3, 3) of a 3x3
// convolution whose output, pixel-shuffled by 2, is the transposed convolution's: output row 2m reads
// input rows m-1 and m with kernel rows 3 and 1, row 2m+1 reads rows m and m+1 with kernel rows 2 and 0,
// and columns alike; the other taps are zero.
at::Tensor subPixelWeight(const at::Tensor& weight) {
  constexpr std::int64_t kNone = 16;  // the zero appended after the 16 taps
  constexpr std::int64_t kTap[2][3] = {{3, 1, -1}, {-1, 2, 0}};
  std::vector<std::int64_t> taps;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int dy = 0; dy < 3; ++dy)
        for (int dx = 0; dx < 3; ++dx)
          taps.push_back(kTap[a][dy] < 0 || kTap[b][dx] < 0 ? kNone : kTap[a][dy] * 4 + kTap[b][dx]);
  const std::int64_t in = weight.size(0), out = weight.size(1);
  const at::Tensor flat = weight.permute({1, 0, 2, 3}).reshape({out, in, 16});
  const at::Tensor padded = at::cat({flat, at::zeros({out, in, 1}, flat.options())}, 2);
  const at::Tensor index = at::tensor(taps, at::kLong).to(weight.device());
  return padded.index_select(2, index)
      .view({out, in, 2, 2, 3, 3})
      .permute({0, 2, 3, 1, 4, 5})
      .reshape({4 * out, in, 3, 3});
}

}  // namespace

at::Tensor deconv2d(const at::Tensor& x, const at::Tensor& weight) {
  const int64_t kernel = weight.size(2);
  const int64_t padding = kernel == 2 ? 0 : 1;
  const int64_t outputPadding = kernel == 3 ? 1 : 0;
  if (oneDnnDeconvolutionApplies(x, weight)) {
    const at::Tensor y = oneDnnDeconvolution(x, weight, padding, outputPadding);
    if (y.defined()) return y;
  }
  if (x.is_cpu() && kernel == 4 && weight.size(3) == 4) {
    // Without oneDNN's deconvolution: LibTorch's CPU transposed convolution is an im2col product plus
    // col2im; as a sub-pixel 3x3 convolution it runs on LibTorch's oneDNN convolutions, 2-3x faster forward
    // and backward though it multiplies the zero taps.
    // Float32 for reduced precision as below.
    // Contiguous: oneDNN picks its kernel by the memory layout, and the same input should always give
    // the same output (a featmap may arrive as a permuted view of the tokens).
    const at::Tensor y = at::conv2d(x.to(at::kFloat).contiguous(), subPixelWeight(weight.to(at::kFloat)),
                                    /*bias=*/{}, {1, 1}, {1, 1});
    return at::pixel_shuffle(y, 2).to(x.scalar_type());
  }
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

namespace sapiens {

at::Tensor linearProduct(const at::Tensor& x, const at::Tensor& weight) {
  return detail::linearBestPath(x, weight, {});
}

void linearProductInto(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& out) {
  if (detail::oneDnnLinearApplies(x, weight) && detail::oneDnnLinear(x, weight, {}, {}, out).defined())
    return;
  at::Tensor target = out;
  at::linear_out(target, x, weight);
}

}  // namespace sapiens
