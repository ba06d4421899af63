#include "deconvolution_weight_gradient.h"

#include "kernel_switch.h"
#include "outer_product_sums.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

namespace sapiens::detail {

namespace {

struct Geometry {
  int64_t batch, in, out, height, width;
};

// Input row i of a sample meets output row 2i - 1 + kh through kernel row kh, and input column j output
// column 2j - 1 + kw: every tap whose output row exists, over the columns whose output column exists.
SAPIENS_AVX512 void addInputRow(const Geometry& k, const float* x, const float* gradOutput, int64_t row,
                                float* dw) {
  const int64_t sample = row / k.height, i = row % k.height;
  const float* inputRow = x + row * k.width * k.in;
  for (int64_t kh = 0; kh < 4; ++kh) {
    const int64_t outputRow = 2 * i - 1 + kh;
    if (outputRow < 0 || outputRow >= 2 * k.height) continue;
    const float* gradientRow = gradOutput + (sample * 2 * k.height + outputRow) * 2 * k.width * k.out;
    for (int64_t kw = 0; kw < 4; ++kw) {
      const int64_t first = kw == 0 ? 1 : 0, end = k.width - (kw == 3 ? 1 : 0);
      if (end <= first) continue;
      // Every other output column: the output gradient's pixels are 2 * out floats apart.
      const PixelRows<float> input{inputRow + first * k.in, k.in, k.in};
      const PixelRows<float> gradient{gradientRow + (2 * first - 1 + kw) * k.out, 2 * k.out, k.out};
      addOuterProductSums(input, gradient, end - first, dw + (kh * 4 + kw) * k.in * k.out, k.out);
    }
  }
}

}  // namespace

bool deconvolutionWeightGradientApplies(const at::Tensor& x, const at::Tensor& gradOutput, int64_t kernel,
                                        int64_t padding, int64_t outputPadding) {
  static const bool on = cpu::hasAvx512() && !switchedOffByEnvironment("SAPIENS_DECONV_WEIGHT_KERNEL");
  const auto channelsLastFloat = [](const at::Tensor& t) {
    return t.is_cpu() && t.scalar_type() == at::kFloat && t.dim() == 4 &&
           t.is_contiguous(at::MemoryFormat::ChannelsLast);
  };
  return on && kernel == 4 && padding == 1 && outputPadding == 0 && channelsLastFloat(x) &&
         channelsLastFloat(gradOutput) && gradOutput.size(0) == x.size(0) && x.numel() > 0 &&
         gradOutput.size(1) > 0 && gradOutput.size(2) == 2 * x.size(2) && gradOutput.size(3) == 2 * x.size(3);
}

at::Tensor deconvolutionWeightGradient(const at::Tensor& x, const at::Tensor& gradOutput) {
  const Geometry k{x.size(0), x.size(1), gradOutput.size(1), x.size(2), x.size(3)};
  // One share of the input rows per thread, each summed into its own (4, 4, in, out) buffer: the shares
  // depend on the thread count only, so the sums' order does not depend on scheduling.
  const int64_t shares = std::max(1, at::get_num_threads()), rows = k.batch * k.height;
  at::Tensor partial =
      at::zeros({shares, 16, k.in, k.out}, x.options().memory_format(at::MemoryFormat::Contiguous));
  const float* input = x.data_ptr<float>();
  const float* gradient = gradOutput.data_ptr<float>();
  float* sums = partial.data_ptr<float>();
  at::parallel_for(0, shares, 1, [&](int64_t begin, int64_t end) {
    for (int64_t share = begin; share < end; ++share)
      for (int64_t row = share * rows / shares; row < (share + 1) * rows / shares; ++row)
        addInputRow(k, input, gradient, row, sums + share * 16 * k.in * k.out);
  });
  return partial.sum(0).view({4, 4, k.in, k.out}).permute({2, 3, 0, 1}).contiguous();
}

}  // namespace sapiens::detail
