#include "exp_rows.h"

#include "exp_vector.h"
#include "vector_lanes.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

// GCC 12 reports the deliberately undefined pass-through operand inside its AVX-512 intrinsics
// (_mm512_undefined_ps) as maybe-uninitialized once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace sapiens::detail {

namespace {

#define SAPIENS_AVX2 __attribute__((target("avx2,fma")))

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

__attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma"))) void expInPlaceAvx512(float* x,
                                                                                             int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tailMask16(n - i);
    _mm512_mask_storeu_ps(x + i, mask, exp16(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

}  // namespace

bool expPathAvailable(ExpPath path) {
  switch (path) {
    case ExpPath::Scalar:
      return true;
    case ExpPath::Avx2:
      return cpu::hasAvx2Fma();
    case ExpPath::Avx512:
      return cpu::hasAvx512();
  }
  return false;
}

void expInPlace(float* x, std::int64_t n, ExpPath path) {
  if (!expPathAvailable(path)) path = ExpPath::Scalar;
  switch (path) {
    case ExpPath::Avx512:
      return expInPlaceAvx512(x, n);
    case ExpPath::Avx2:
      return expInPlaceAvx2(x, n);
    case ExpPath::Scalar:
      for (std::int64_t i = 0; i < n; ++i) x[i] = std::exp(x[i]);
  }
}

void expInPlace(float* x, std::int64_t n) {
  static const ExpPath fastest = expPathAvailable(ExpPath::Avx512) ? ExpPath::Avx512
                                 : expPathAvailable(ExpPath::Avx2) ? ExpPath::Avx2
                                                                   : ExpPath::Scalar;
  expInPlace(x, n, fastest);
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
