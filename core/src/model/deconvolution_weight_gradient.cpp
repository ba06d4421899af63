#include "deconvolution_weight_gradient.h"

#include "kernel_switch.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>

namespace sapiens::detail {

namespace {

// Rows of input pixels per block: products this deep ran at BLAS's rate (scratch program, 0.4b seg head
// shapes); the block's buffers stay a few MB.
constexpr int64_t kProductDepth = 1536;

// A block of input rows [m0, m0 + rows) of one sample, padded by a zero column on each side (width
// W + 2), so that a column shift of a whole block is one offset into it.
struct Blocks {
  int64_t batch, in, out, height, width, paddedWidth, rows, perSample;

  Blocks(const at::Tensor& x, const at::Tensor& gradOutput)
      : batch(x.size(0)),
        in(x.size(1)),
        out(gradOutput.size(1)),
        height(x.size(2)),
        width(x.size(3)),
        paddedWidth(width + 2),
        rows(std::clamp<int64_t>(kProductDepth / (width + 2), 1, height)),
        perSample((height + rows - 1) / rows) {}

  // Padded pixels of the input rows m0 - 1 ... m0 + rows, and a zero guard pixel at each end.
  int64_t inputPixels() const { return (rows + 2) * paddedWidth + 2; }
};

// Pixel p of `pairs` holds padded pixels p and p + 1 (guard first) of rows m0 - 1 ... m0 + rows: one
// product then covers both column shifts of a parity, the left tap in its first `in` columns.
void fillShiftedPairs(const Blocks& k, const float* x, int64_t sample, int64_t m0, int64_t rows,
                      float* pairs) {
  const auto source = [&](int64_t q) -> const float* {
    if (q < 1 || q >= k.inputPixels() - 1) return nullptr;
    const int64_t r = (q - 1) / k.paddedWidth, column = (q - 1) % k.paddedWidth - 1, row = m0 - 1 + r;
    if (r > rows + 1 || row < 0 || row >= k.height || column < 0 || column >= k.width) return nullptr;
    return x + ((sample * k.height + row) * k.width + column) * k.in;
  };
  const std::size_t bytes = static_cast<std::size_t>(k.in) * sizeof(float);
  at::parallel_for(0, k.inputPixels(), 64, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      for (int64_t half = 0; half < 2; ++half) {
        float* target = pairs + (2 * p + half) * k.in;
        const float* from = source(p + half);
        from ? std::memcpy(target, from, bytes) : std::memset(target, 0, bytes);
      }
    }
  });
}

// parities[2a + b] row i, padded column n + 1: the output gradient at (2(m0 + i) + a, 2n + b); the pad
// columns are zero, so the products' rows that straddle two input rows add nothing.
void fillParityRows(const Blocks& k, const float* gradOutput, int64_t sample, int64_t m0, int64_t rows,
                    float* parities) {
  const std::size_t bytes = static_cast<std::size_t>(k.out) * sizeof(float);
  at::parallel_for(0, 4 * rows, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t parity = task / rows, i = task % rows, a = parity / 2, b = parity % 2;
      float* row = parities + (parity * k.rows + i) * k.paddedWidth * k.out;
      std::memset(row, 0, bytes);
      std::memset(row + (k.width + 1) * k.out, 0, bytes);
      const float* from = gradOutput + ((sample * 2 * k.height + 2 * (m0 + i) + a) * 2 * k.width + b) * k.out;
      for (int64_t n = 0; n < k.width; ++n) std::memcpy(row + (n + 1) * k.out, from + 2 * n * k.out, bytes);
    }
  });
}

// Output row 2m + a reads input rows m + di for di in {a - 1, a} with kernel row ky = a + 1 - 2 di, and
// columns alike; sums[ky][b] is (left tap, right tap) x in x out of parity column b.
void addBlockProducts(const Blocks& k, int64_t rows, const at::Tensor& pairs, const at::Tensor& parities,
                      at::Tensor& sums) {
  const int64_t depth = rows * k.paddedWidth;
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t di = a - 1; di <= a; ++di) {
      for (int64_t b = 0; b < 2; ++b) {
        const at::Tensor shifted = pairs.narrow(0, 1 + (1 + di) * k.paddedWidth + (b - 1), depth);
        at::Tensor sum = sums[a + 1 - 2 * di][b].view({2 * k.in, k.out});
        sum.addmm_(shifted.t(), parities[2 * a + b].narrow(0, 0, depth));
      }
    }
  }
}

}  // namespace

bool deconvolutionWeightGradientApplies(const at::Tensor& x, const at::Tensor& gradOutput, int64_t kernel,
                                        int64_t padding, int64_t outputPadding) {
  static const bool on = !switchedOffByEnvironment("SAPIENS_DECONV_WEIGHT_PRODUCTS");
  const auto channelsLastFloat = [](const at::Tensor& t) {
    return t.is_cpu() && t.scalar_type() == at::kFloat && t.dim() == 4 &&
           t.is_contiguous(at::MemoryFormat::ChannelsLast);
  };
  return on && kernel == 4 && padding == 1 && outputPadding == 0 && channelsLastFloat(x) &&
         channelsLastFloat(gradOutput) && gradOutput.size(1) >= 256 && gradOutput.size(0) == x.size(0) &&
         gradOutput.size(2) == 2 * x.size(2) && gradOutput.size(3) == 2 * x.size(3);
}

at::Tensor deconvolutionWeightGradient(const at::Tensor& x, const at::Tensor& gradOutput) {
  const Blocks k(x, gradOutput);
  const auto options = x.options().memory_format(at::MemoryFormat::Contiguous);
  at::Tensor pairs = at::empty({k.inputPixels(), 2 * k.in}, options);
  at::Tensor parities = at::empty({4, k.rows * k.paddedWidth, k.out}, options);
  at::Tensor sums = at::zeros({4, 2, 2, k.in, k.out}, options);  // [ky][b][left, right tap][in][out]
  for (int64_t block = 0; block < k.batch * k.perSample; ++block) {
    const int64_t sample = block / k.perSample, m0 = block % k.perSample * k.rows;
    const int64_t rows = std::min(k.rows, k.height - m0);
    fillShiftedPairs(k, x.data_ptr<float>(), sample, m0, rows, pairs.data_ptr<float>());
    fillParityRows(k, gradOutput.data_ptr<float>(), sample, m0, rows, parities.data_ptr<float>());
    addBlockProducts(k, rows, pairs, parities, sums);
  }
  // Parity column b's left tap is kernel column 3 - b, its right tap 1 - b: (b, tap) 0..3 -> kx 3, 1, 2, 0.
  const at::Tensor byColumn = sums.view({4, 4, k.in, k.out}).index_select(1, at::tensor({3, 1, 2, 0}));
  return byColumn.permute({2, 3, 0, 1}).contiguous();
}

}  // namespace sapiens::detail
