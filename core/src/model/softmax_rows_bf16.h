#pragma once
// The softmax's row passes of the bf16 attention kernels (attention_onednn.cpp, attention_amx.cpp):
// float32 scores in, bf16 probabilities out, and the un-normalised float32 output divided by the row's
// sum and rounded to bf16 once. Include only from files compiled for x86-64.

#include "exp_polynomial.h"
#include "vector_lanes.h"

#include <cstdint>
#include <limits>

// GCC 12 reports the deliberately undefined pass-through operand inside its AVX-512 intrinsics
// (_mm512_undefined_ps) as maybe-uninitialized once they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace sapiens::detail {

// 2^t for t <= 0 (up to rounding): f = t - floor(t) in [0, 1) in one instruction (VREDUCEPS rounding
// down, which gives 0 for an infinite t), 2^f by a degree-4 fit on [0, 1) (2.6e-6 relative, a thousandth of
// the bf16 rounding the probabilities get), and 2^floor(t) applied by scalef, which floors its exponent
// operand itself and takes a value below float's range (-inf included) to 0. NaN stays NaN.
SAPIENS_AVX512_BF16 inline __m512 exp2NonPositive(__m512 t) {
  const __m512 f = _mm512_reduce_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 p = _mm512_set1_ps(1.353414636105299e-2f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.201156064867973e-2f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.24144265055656433f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.6930038928985596f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0000026226043701f));
  return _mm512_scalef_ps(p, t);
}

// The largest of s[0, n) (NaN may or may not win: what follows passes it on either way).
SAPIENS_AVX512_BF16 inline float rowMaximum(const float* s, std::int64_t n) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 m = lowest;
  for (std::int64_t j = 0; j < n; j += 16)
    m = _mm512_max_ps(m, _mm512_mask_loadu_ps(lowest, tailMask16(n - j), s + j));
  return _mm512_reduce_max_ps(m);
}

// maxima[r] = rowMaximum(s + r stride, n) for r < rows. Four rows at a time: one row's chain of maxima
// and its reduction wait on each instruction's latency, which made the maxima cost half as much as the
// exponentials after them.
SAPIENS_AVX512_BF16 inline void rowMaxima(const float* s, std::int64_t stride, std::int64_t rows,
                                          std::int64_t n, float* maxima) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  std::int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    const float* row = s + r * stride;
    __m512 m0 = lowest, m1 = lowest, m2 = lowest, m3 = lowest;
    for (std::int64_t j = 0; j < n; j += 16) {
      const __mmask16 mask = tailMask16(n - j);
      m0 = _mm512_max_ps(m0, _mm512_mask_loadu_ps(lowest, mask, row + j));
      m1 = _mm512_max_ps(m1, _mm512_mask_loadu_ps(lowest, mask, row + stride + j));
      m2 = _mm512_max_ps(m2, _mm512_mask_loadu_ps(lowest, mask, row + 2 * stride + j));
      m3 = _mm512_max_ps(m3, _mm512_mask_loadu_ps(lowest, mask, row + 3 * stride + j));
    }
    maxima[r] = _mm512_reduce_max_ps(m0);
    maxima[r + 1] = _mm512_reduce_max_ps(m1);
    maxima[r + 2] = _mm512_reduce_max_ps(m2);
    maxima[r + 3] = _mm512_reduce_max_ps(m3);
  }
  for (; r < rows; ++r) maxima[r] = rowMaximum(s + r * stride, n);
}

// p[j] = bf16(exp(scale (s[j] - maximum))) for j < n, maximum >= every s[j] and scale > 0; returns the
// float32 sum of the exponentials. The exponent is never positive, which is what makes exp2NonPositive's
// short form enough: one fused multiply-add takes a score to its power of two. Whole vectors go two at a
// time, unmasked, with one rounding instruction for both; only the last partial one is masked.
SAPIENS_AVX512_BF16 inline float expShiftedRowToBf16(const float* s, std::uint16_t* p, std::int64_t n,
                                                     float scale, float maximum) {
  const float toPower = scale * exp_polynomial::kLog2e;
  const __m512 factor = _mm512_set1_ps(toPower);
  const __m512 shift = _mm512_set1_ps(-maximum * toPower);
  __m512 sum = _mm512_setzero_ps(), sum2 = _mm512_setzero_ps();
  std::int64_t j = 0;
  for (; j + 32 <= n; j += 32) {
    const __m512 e = exp2NonPositive(_mm512_fmadd_ps(_mm512_loadu_ps(s + j), factor, shift));
    const __m512 e2 = exp2NonPositive(_mm512_fmadd_ps(_mm512_loadu_ps(s + j + 16), factor, shift));
    sum = _mm512_add_ps(sum, e);
    sum2 = _mm512_add_ps(sum2, e2);
    _mm512_storeu_si512(p + j, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(e2, e)));
  }
  for (; j < n; j += 16) {
    const __mmask16 mask = tailMask16(n - j);
    const __m512 e = _mm512_maskz_mov_ps(
        mask, exp2NonPositive(_mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, s + j), factor, shift)));
    sum = _mm512_add_ps(sum, e);
    storeBf16(p + j, mask, e);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(sum, sum2));
}

// p[j] = bf16(exp(scale s[j] - max(scale s))) for j < n; returns the float32 sum of the exponentials. The
// scale is applied here rather than by the product: oneDNN 2.6 has no AMX kernel with an output scale.
SAPIENS_AVX512_BF16 inline float expRowToBf16(const float* s, std::uint16_t* p, std::int64_t n, float scale) {
  return expShiftedRowToBf16(s, p, n, scale, rowMaximum(s, n));
}

// out[j] = bf16(acc[j] / sum) for j < n.
SAPIENS_AVX512_BF16 inline void normaliseRowToBf16(const float* acc, float sum, std::uint16_t* out,
                                                   std::int64_t n) {
  const __m512 inverse = _mm512_set1_ps(1.0f / sum);
  for (std::int64_t j = 0; j < n; j += 16) {
    const __mmask16 mask = tailMask16(n - j);
    storeBf16(out + j, mask, _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, acc + j), inverse));
  }
}

}  // namespace sapiens::detail

#pragma GCC diagnostic pop
