#include "deconvolution_weight_gradient.h"

#include "kernel_switch.h"
#include "vector_lanes.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

namespace sapiens::detail {

namespace {

// A tile's sums in registers: kChannels input channels by kVectors vectors of 16 output channels, 24 of
// the 32 AVX-512 registers, each broadcast input value used four times and each output-gradient vector
// six times (loads well under the two FMAs a cycle).
constexpr int kChannels = 6;
constexpr int kVectors = 4;

struct Geometry {
  int64_t batch, in, out, height, width;
};

// One tap's pixels along an input row: input pixels x[j] (stride `in`) against the output gradient at
// g[j] (stride 2 * out: every other output column), added into dw (in x out, row-major).
struct TapRow {
  const float* x;
  const float* g;
  int64_t count;
  float* dw;
};

// dw[c][o] += sum over j of x[j][c] g[j][o] for channels c0 .. c0 + C and output vectors o0 .. o0 + 16 V,
// the last vector masked by `lastMask`.
template <int C, int V>
SAPIENS_AVX512 void addTile(const Geometry& k, const TapRow& r, int64_t c0, int64_t o0, __mmask16 lastMask) {
  __m512 sums[C][V];
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) sums[c][v] = _mm512_setzero_ps();
  const float* x = r.x + c0;
  const float* g = r.g + o0;
  for (int64_t j = 0; j < r.count; ++j, x += k.in, g += 2 * k.out) {
    __m512 gradient[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      gradient[v] = _mm512_maskz_loadu_ps(v + 1 < V ? 0xFFFF : lastMask, g + 16 * v);
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const __m512 value = _mm512_set1_ps(x[c]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) sums[c][v] = _mm512_fmadd_ps(value, gradient[v], sums[c][v]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c) {
    float* target = r.dw + (c0 + c) * k.out + o0;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __mmask16 mask = v + 1 < V ? 0xFFFF : lastMask;
      _mm512_mask_storeu_ps(target + 16 * v, mask,
                            _mm512_add_ps(_mm512_maskz_loadu_ps(mask, target + 16 * v), sums[c][v]));
    }
  }
}

template <int C>
SAPIENS_AVX512 void addTilesOfChannels(const Geometry& k, const TapRow& r, int64_t c0) {
  for (int64_t o0 = 0; o0 < k.out; o0 += 16 * kVectors) {
    const int vectors = static_cast<int>(std::min<int64_t>(kVectors, (k.out - o0 + 15) / 16));
    const __mmask16 lastMask = tailMask16(k.out - o0 - 16 * (vectors - 1));
    withVectorCount<kVectors>(vectors,
                              [&](auto v) { addTile<C, decltype(v)::value>(k, r, c0, o0, lastMask); });
  }
}

SAPIENS_AVX512 void addTapRow(const Geometry& k, const TapRow& r) {
  int64_t c0 = 0;
  for (; c0 + kChannels <= k.in; c0 += kChannels) addTilesOfChannels<kChannels>(k, r, c0);
  for (; c0 < k.in; ++c0) addTilesOfChannels<1>(k, r, c0);
}

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
      addTapRow(k, {inputRow + first * k.in, gradientRow + (2 * first - 1 + kw) * k.out, end - first,
                    dw + (kh * 4 + kw) * k.in * k.out});
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
