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
SAPIENS_AVX512 void addInputRow(const Geometry& shape, const float* x, const float* gradOutput, int64_t row,
                                float* tapSums) {
  const int64_t sample = row / shape.height, i = row % shape.height;
  const float* inputRow = x + row * shape.width * shape.in;
  for (int64_t kh = 0; kh < 4; ++kh) {
    const int64_t outputRow = 2 * i - 1 + kh;
    if (outputRow < 0 || outputRow >= 2 * shape.height) continue;
    const float* gradientRow =
        gradOutput + (sample * 2 * shape.height + outputRow) * 2 * shape.width * shape.out;
    for (int64_t kw = 0; kw < 4; ++kw) {
      const int64_t first = kw == 0 ? 1 : 0, end = shape.width - (kw == 3 ? 1 : 0);
      if (end <= first) continue;
      // Every other output column: the output gradient's pixels are 2 * out floats apart.
      const PixelRows<float> input{inputRow + first * shape.in, shape.in, shape.in};
      const PixelRows<float> gradient{gradientRow + (2 * first - 1 + kw) * shape.out, 2 * shape.out,
                                      shape.out};
      addOuterProductSums(input, gradient, end - first, tapSums + (kh * 4 + kw) * shape.in * shape.out,
                          shape.out);
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

// Shares of the input rows, each summed into its own (4, 4, in, out) buffer: one per thread, at most one per
// row, and their buffers within kShareBytes together (32 MB each for the 0.4b head's widest layer). They
// depend on the thread count and the shape only, so the sums' order does not depend on scheduling.
constexpr int64_t kShareBytes = int64_t{256} << 20;

int64_t sharesFor(const Geometry& shape) {
  const int64_t bytesPerShare = 16 * shape.in * shape.out * static_cast<int64_t>(sizeof(float));
  return std::max<int64_t>(
      1, std::min({int64_t{at::get_num_threads()}, shape.batch * shape.height, kShareBytes / bytesPerShare}));
}

at::Tensor deconvolutionWeightGradient(const at::Tensor& x, const at::Tensor& gradOutput) {
  TORCH_CHECK(deconvolutionWeightGradientApplies(x, gradOutput, 4, 1, 0),
              "deconvolutionWeightGradient: unsupported operands ", x.sizes(), " and ", gradOutput.sizes());
  const Geometry shape{x.size(0), x.size(1), gradOutput.size(1), x.size(2), x.size(3)};
  const int64_t shares = sharesFor(shape), rows = shape.batch * shape.height;
  at::Tensor partial =
      at::zeros({shares, 16, shape.in, shape.out}, x.options().memory_format(at::MemoryFormat::Contiguous));
  const float* input = x.data_ptr<float>();
  const float* gradient = gradOutput.data_ptr<float>();
  float* sums = partial.data_ptr<float>();
  at::parallel_for(0, shares, 1, [&](int64_t begin, int64_t end) {
    for (int64_t share = begin; share < end; ++share)
      for (int64_t row = share * rows / shares; row < (share + 1) * rows / shares; ++row)
        addInputRow(shape, input, gradient, row, sums + share * 16 * shape.in * shape.out);
  });
  return partial.sum(0).view({4, 4, shape.in, shape.out}).permute({2, 3, 0, 1}).contiguous();
}

}  // namespace sapiens::detail
