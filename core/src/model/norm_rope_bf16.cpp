#include "norm_rope_bf16.h"

#include "onednn_matmul.h"
#include "vector_lanes.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <cmath>
#include <cstdint>

// GCC 12 reports the deliberately undefined pass-through operand inside its AVX-512 intrinsics as
// (maybe-)uninitialized once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace sapiens::detail {

namespace {

using Bits = std::uint16_t;

// 1 / sqrt(mean(x^2) + eps) of one row, the sum in float32.
SAPIENS_AVX512_BF16 float inverseRms(const Bits* x, int64_t n, float eps) {
  __m512 sum = _mm512_setzero_ps();
  for (int64_t j = 0; j < n; j += 16) {
    const __m512 v = loadBf16(x + j, tailMask16(n - j));
    sum = _mm512_fmadd_ps(v, v, sum);
  }
  return 1.0f / std::sqrt(_mm512_reduce_add_ps(sum) / static_cast<float>(n) + eps);
}

// bf16(x * inv) * w for the lanes of x + j and w + j in `mask`, before its final rounding to bf16.
SAPIENS_AVX512_BF16 inline __m512 normalised(const Bits* x, const Bits* w, __m512 inv, __mmask16 mask) {
  return _mm512_mul_ps(roundedToBf16(_mm512_mul_ps(loadBf16(x, mask), inv)), loadBf16(w, mask));
}

// y = bf16(bf16(x * inv) * w) for one row.
SAPIENS_AVX512_BF16 void normRow(const Bits* x, const Bits* w, Bits* y, int64_t n, float eps) {
  const __m512 inv = _mm512_set1_ps(inverseRms(x, n, eps));
  for (int64_t j = 0; j < n; j += 16) {
    const __mmask16 mask = tailMask16(n - j);
    storeBf16(y + j, mask, normalised(x + j, w + j, inv, mask));
  }
}

// The norm of one head's row, then its rotation by (cos, sin) of its token: with halves a, b of the
// normalised row, y = bf16(bf16(row * cos) + bf16(rotate(row) * sin)) where rotate(row) = (-b, a).
SAPIENS_AVX512_BF16 void normRotateRow(const Bits* x, const Bits* w, const Bits* cos, const Bits* sin,
                                       Bits* y, int64_t d, float eps, float* scratch) {
  const __m512 inv = _mm512_set1_ps(inverseRms(x, d, eps));
  for (int64_t j = 0; j < d; j += 16) {
    const __mmask16 mask = tailMask16(d - j);
    _mm512_mask_storeu_ps(scratch + j, mask, roundedToBf16(normalised(x + j, w + j, inv, mask)));
  }
  const int64_t half = d / 2;
  for (int64_t j = 0; j < d; j += 16) {
    const __mmask16 mask = tailMask16(d - j);
    const __m512 row = _mm512_maskz_loadu_ps(mask, scratch + j);
    // rotate(row)[j] = -row[j + half] for j < half, row[j - half] after (16-wide spans never straddle
    // half when half is a multiple of 16; otherwise element by element below).
    __m512 other;
    if (half % 16 == 0) {
      other = j < half ? _mm512_sub_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(mask, scratch + j + half))
                       : _mm512_maskz_loadu_ps(mask, scratch + j - half);
    } else {
      alignas(64) float lanes[16] = {};
      for (int64_t i = 0; i < 16 && j + i < d; ++i)
        lanes[i] = j + i < half ? -scratch[j + i + half] : scratch[j + i - half];
      other = _mm512_load_ps(lanes);
    }
    const __m512 first = roundedToBf16(_mm512_mul_ps(row, loadBf16(cos + j, mask)));
    const __m512 second = roundedToBf16(_mm512_mul_ps(other, loadBf16(sin + j, mask)));
    storeBf16(y + j, mask, _mm512_add_ps(first, second));
  }
}

const Bits* bits(const at::Tensor& t) {
  return static_cast<const Bits*>(t.data_ptr());
}

}  // namespace

bool fusedNormApplies(const at::Tensor& x, const at::Tensor& weight) {
  // Part of the bf16 CPU path that SAPIENS_ONEDNN_MATMUL=0 turns off as a whole.
  static const bool cpuHasIt = cpu::hasAvx512Bf16() && oneDnnBf16InUse();
  if (!cpuHasIt || !x.is_cpu() || x.scalar_type() != at::kBFloat16 || !x.is_contiguous() || x.dim() < 1 ||
      !weight.defined() || weight.scalar_type() != at::kBFloat16 || !weight.is_cpu() ||
      weight.numel() != x.size(-1) || x.size(-1) == 0)
    return false;
  return !(c10::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad()));
}

at::Tensor rmsNormBf16(const at::Tensor& x, const at::Tensor& weight, double eps) {
  // One "head" of all the channels: head-major and token-major are the same layout.
  return rmsNormRopeBf16(x.view({1, -1, 1, x.size(-1)}), weight, eps, nullptr).view(x.sizes());
}

at::Tensor rmsNormRopeBf16(const at::Tensor& x, const at::Tensor& weight, double eps,
                           const RopeTables* rope) {
  TORCH_CHECK(fusedNormApplies(x, weight) && x.dim() == 4, "rmsNormRopeBf16: unsupported tensors or CPU");
  const int64_t batch = x.size(0), tokens = x.size(1), heads = x.size(2), d = x.size(3);
  const at::Tensor w = weight.contiguous();
  at::Tensor sin, cos;
  int64_t prefix = tokens;
  if (rope) {
    sin = rope->sin.contiguous();
    cos = rope->cos.contiguous();
    TORCH_CHECK(sin.scalar_type() == at::kBFloat16 && sin.size(-1) == d && sin.size(0) <= tokens,
                "rmsNormRopeBf16: tables do not fit");
    prefix = tokens - sin.size(0);
  }
  at::Tensor y = at::empty({batch, heads, tokens, d}, x.options());
  const Bits* xData = bits(x);
  const Bits* wData = bits(w);
  Bits* yData = static_cast<Bits*>(y.data_ptr());
  const float epsilon = static_cast<float>(eps);
  at::parallel_for(0, batch * tokens, 16, [&](int64_t begin, int64_t end) {
    std::vector<float> scratch(static_cast<std::size_t>(d));
    for (int64_t row = begin; row < end; ++row) {
      const int64_t token = row % tokens;
      const int64_t b = row / tokens;
      for (int64_t h = 0; h < heads; ++h) {
        const int64_t from = (row * heads + h) * d;
        const int64_t to = ((b * heads + h) * tokens + token) * d;  // head-major
        if (token < prefix) {
          normRow(xData + from, wData, yData + to, d, epsilon);
        } else {
          const int64_t at = (token - prefix) * d;
          normRotateRow(xData + from, wData, bits(cos) + at, bits(sin) + at, yData + to, d, epsilon,
                        scratch.data());
        }
      }
    }
  });
  return y;
}

}  // namespace sapiens::detail
