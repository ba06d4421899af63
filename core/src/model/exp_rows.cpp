#include "exp_rows.h"

#include "exp_polynomial.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sapiens::detail {

namespace {

#define SAPIENS_AVX2 __attribute__((target("avx2,fma")))

SAPIENS_AVX2 inline __m256 exp8(__m256 x) {
  namespace c = exp_polynomial;
  x = _mm256_max_ps(x, _mm256_set1_ps(c::kLowestInput));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(c::kLog2e)),
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
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
}

SAPIENS_AVX2 float horizontal(__m256 v, float (*combine)(float, float)) {
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, v);
  float out = lanes[0];
  for (int i = 1; i < 8; ++i) out = combine(out, lanes[i]);
  return out;
}

SAPIENS_AVX2 float expShiftedRow(float* x, int64_t n) {
  int64_t i = 0;
  __m256 maxima = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  for (; i + 8 <= n; i += 8) maxima = _mm256_max_ps(maxima, _mm256_loadu_ps(x + i));
  float rowMax = horizontal(maxima, [](float a, float b) { return std::max(a, b); });
  for (; i < n; ++i) rowMax = std::max(rowMax, x[i]);

  const __m256 shift = _mm256_set1_ps(rowMax);
  __m256 sums = _mm256_setzero_ps();
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), shift));
    _mm256_storeu_ps(x + i, e);
    sums = _mm256_add_ps(sums, e);
  }
  float sum = horizontal(sums, [](float a, float b) { return a + b; });
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - rowMax);
    sum += x[i];
  }
  return sum;
}

SAPIENS_AVX2 void expInPlaceAvx2(float* x, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, exp8(_mm256_loadu_ps(x + i)));
  for (; i < n; ++i) x[i] = std::exp(x[i]);
}

}  // namespace

void expInPlace(float* x, std::int64_t n) {
  static const bool vectorised = cpu::hasAvx2Fma();
  if (vectorised) return expInPlaceAvx2(x, n);
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

bool expShiftedRows(at::Tensor& block, at::Tensor& rowSums) {
  if (!cpu::hasAvx2Fma() || !block.is_cpu() || block.scalar_type() != at::kFloat || block.dim() != 2 ||
      block.stride(1) != 1 || !rowSums.is_contiguous() || rowSums.scalar_type() != at::kFloat ||
      rowSums.numel() < block.size(0)) {
    return false;
  }
  float* base = block.data_ptr<float>();
  float* sums = rowSums.data_ptr<float>();
  const int64_t columns = block.size(1);
  const int64_t rowStride = block.stride(0);
  at::parallel_for(0, block.size(0), /*grain_size=*/16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) sums[r] = expShiftedRow(base + r * rowStride, columns);
  });
  return true;
}

}  // namespace sapiens::detail
