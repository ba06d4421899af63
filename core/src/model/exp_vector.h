#pragma once
// The exponential of 8 (AVX2) or 16 (AVX-512) floats with exp_polynomial's coefficients, for the
// softmax kernels. Edges as std::exp has them: NaN stays NaN (a diverged model must not look fine),
// +inf and overflow give +inf, -inf and underflow give 0. Include only from files compiled for x86-64.

#include "exp_polynomial.h"

#include <immintrin.h>

namespace sapiens::detail {

// Clamped as max(lowest, x) then min(highest, .): x86's min/max return their second operand when
// either is NaN, so this order keeps NaN. At n = 128 (x near ln(FLT_MAX)) 2^n has no exponent bits:
// 2^127 times 2p gives the same product, finite or +inf as the true value is.
__attribute__((target("avx2,fma"))) inline __m256 exp8(__m256 x) {
  namespace c = exp_polynomial;
  const __m256 underflows = _mm256_cmp_ps(x, _mm256_set1_ps(c::kLowestInput), _CMP_LT_OQ);
  x = _mm256_min_ps(_mm256_set1_ps(c::kHighestInput), _mm256_max_ps(_mm256_set1_ps(c::kLowestInput), x));
  __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(c::kLog2e)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(c::kLn2High), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(c::kLn2Low), r);
  __m256 p = _mm256_set1_ps(c::kP0);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c::kP1));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c::kP2));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c::kP3));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c::kP4));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c::kP5));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256 top = _mm256_cmp_ps(n, _mm256_set1_ps(127.5f), _CMP_GT_OQ);
  n = _mm256_sub_ps(n, _mm256_and_ps(top, _mm256_set1_ps(1.0f)));
  p = _mm256_add_ps(p, _mm256_and_ps(top, p));
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(underflows, _mm256_mul_ps(p, _mm256_castsi256_ps(exponent)));
}

__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))) inline __m512 exp16(__m512 x) {
  namespace c = exp_polynomial;
  const __mmask16 kept = _mm512_cmp_ps_mask(x, _mm512_set1_ps(c::kLowestInput), _CMP_NLT_UQ);
  x = _mm512_min_ps(_mm512_set1_ps(c::kHighestInput), _mm512_max_ps(_mm512_set1_ps(c::kLowestInput), x));
  __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(c::kLog2e)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(c::kLn2High), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(c::kLn2Low), r);
  __m512 p = _mm512_set1_ps(c::kP0);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c::kP1));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c::kP2));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c::kP3));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c::kP4));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c::kP5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __mmask16 top = _mm512_cmp_ps_mask(n, _mm512_set1_ps(127.5f), _CMP_GT_OQ);
  n = _mm512_mask_sub_ps(n, top, n, _mm512_set1_ps(1.0f));
  p = _mm512_mask_add_ps(p, top, p, p);
  const __m512i exponent =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  return _mm512_maskz_mul_ps(kept, p, _mm512_castsi512_ps(exponent));
}

}  // namespace sapiens::detail
