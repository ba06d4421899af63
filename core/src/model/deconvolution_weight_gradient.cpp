#include "deconvolution_weight_gradient.h"

#include "kernel_switch.h"

#include <ATen/ATen.h>

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

// Pixel p of `quads` holds padded pixels p, p + 1, p + W + 2 and p + W + 3 (guard first) of rows
// m0 - 1 ... m0 + rows: from the parity's first pixel, one product then covers its four taps (two row
// shifts by two column shifts), four times as wide as one tap's.
void fillShiftedQuads(const Blocks& k, const float* x, int64_t sample, int64_t m0, int64_t rows,
                      float* quads) {
  const auto source = [&](int64_t q) -> const float* {
    if (q < 1 || q >= k.inputPixels() - 1) return nullptr;
    const int64_t r = (q - 1) / k.paddedWidth, column = (q - 1) % k.paddedWidth - 1, row = m0 - 1 + r;
    if (r > rows + 1 || row < 0 || row >= k.height || column < 0 || column >= k.width) return nullptr;
    return x + ((sample * k.height + row) * k.width + column) * k.in;
  };
  const int64_t offsets[4] = {0, 1, k.paddedWidth, k.paddedWidth + 1};
  const std::size_t bytes = static_cast<std::size_t>(k.in) * sizeof(float);
  for (int64_t p = 0; p < k.inputPixels(); ++p) {
    for (int64_t shift = 0; shift < 4; ++shift) {
      float* target = quads + (4 * p + shift) * k.in;
      const float* from = source(p + offsets[shift]);
      from ? std::memcpy(target, from, bytes) : std::memset(target, 0, bytes);
    }
  }
}

// parities[2a + b] row i, padded column n + 1: the output gradient at (2(m0 + i) + a, 2n + b); the pad
// columns are zero, so the products' rows that straddle two input rows add nothing.
void fillParityRows(const Blocks& k, const float* gradOutput, int64_t sample, int64_t m0, int64_t rows,
                    float* parities) {
  const std::size_t bytes = static_cast<std::size_t>(k.out) * sizeof(float);
  for (int64_t task = 0; task < 4 * rows; ++task) {
    const int64_t parity = task / rows, i = task % rows, a = parity / 2, b = parity % 2;
    float* row = parities + (parity * k.rows + i) * k.paddedWidth * k.out;
    std::memset(row, 0, bytes);
    std::memset(row + (k.width + 1) * k.out, 0, bytes);
    const float* from = gradOutput + ((sample * 2 * k.height + 2 * (m0 + i) + a) * 2 * k.width + b) * k.out;
    for (int64_t n = 0; n < k.width; ++n) std::memcpy(row + (n + 1) * k.out, from + 2 * n * k.out, bytes);
  }
}

// Output pixel (2m + a, 2n + b) reads input rows m + di for di in {a - 1, a} and columns n + dj for dj in
// {b - 1, b}: from quad pixel (a, b) on. sums[a][b] is out x (di, dj) x in. (Output channels first: BLAS
// ran these products faster that way round.)
void addBlockProducts(const Blocks& k, int64_t rows, const at::Tensor& quads, const at::Tensor& parities,
                      at::Tensor& sums) {
  const int64_t depth = rows * k.paddedWidth;
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 2; ++b) {
      at::Tensor sum = sums[a][b];
      sum.addmm_(parities[2 * a + b].narrow(0, 0, depth).t(), quads.narrow(0, a * k.paddedWidth + b, depth));
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
  at::Tensor quads = at::empty({k.inputPixels(), 4 * k.in}, options);
  at::Tensor parities = at::empty({4, k.rows * k.paddedWidth, k.out}, options);
  at::Tensor sums = at::zeros({2, 2, k.out, 4 * k.in}, options);
  for (int64_t block = 0; block < k.batch * k.perSample; ++block) {
    const int64_t sample = block / k.perSample, m0 = block % k.perSample * k.rows;
    const int64_t rows = std::min(k.rows, k.height - m0);
    fillShiftedQuads(k, x.data_ptr<float>(), sample, m0, rows, quads.data_ptr<float>());
    fillParityRows(k, gradOutput.data_ptr<float>(), sample, m0, rows, parities.data_ptr<float>());
    addBlockProducts(k, rows, quads, parities, sums);
  }
  // [a][b][out][di][dj][in] -> [2a + di][2b + dj][in][out]; kernel row 3 - a for di = a - 1, 1 - a for
  // di = a: 2a + di = 0, 1, 2, 3 -> rows 3, 1, 2, 0, and columns alike.
  const at::Tensor byShift =
      sums.view({2, 2, k.out, 2, 2, k.in}).permute({0, 3, 1, 4, 5, 2}).reshape({4, 4, k.in, k.out});
  const at::Tensor order = at::tensor({3, 1, 2, 0});
  return byShift.index_select(0, order).index_select(1, order).permute({2, 3, 0, 1}).contiguous();
}

}  // namespace sapiens::detail
