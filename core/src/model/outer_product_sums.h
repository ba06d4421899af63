#pragma once
// Sums of outer products over rows of two operands, sums[i][j] += sum over p of a[p][i] b[p][j]: the weight
// gradients of the heads' convolutions (a transposed convolution's tap, a 1x1 convolution), whose
// reduction runs over pixels. A tile of 6 rows of a by 4 vectors of b stays in 24 registers over all the
// pixels given, each broadcast value of a used four times and each vector of b six times, so the loop is
// bound by its multiply-adds rather than by loads and stores of the sums. Include only from files compiled
// for x86-64.

#include "norm_silu_lanes.h"

#include <algorithm>
#include <cstdint>

namespace sapiens::detail {

/// One operand: `count` values per pixel from `values`, pixel p's at values + p * stride.
template <typename T>
struct PixelRows {
  const T* values;
  int64_t stride, count;
};

namespace outer_product {

inline constexpr int kRows = 6;
inline constexpr int kVectors = 4;

// sums[i][j] for i in i0 .. i0 + R, j in j0 .. j0 + 16 V (the last vector masked by lastMask).
template <int R, int V, typename T>
SAPIENS_AVX512 void addTile(const PixelRows<T>& a, const PixelRows<T>& b, int64_t pixels, int64_t i0,
                            int64_t j0, __mmask16 lastMask, float* sums, int64_t sumsStride) {
  __m512 tile[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) tile[r][v] = _mm512_setzero_ps();
  const T* aPixel = a.values + i0;
  const T* bPixel = b.values + j0;
  for (int64_t p = 0; p < pixels; ++p, aPixel += a.stride, bPixel += b.stride) {
    __m512 column[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      column[v] = norm_silu::load(bPixel + 16 * v, v + 1 < V ? __mmask16(0xFFFF) : lastMask);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 value = _mm512_set1_ps(static_cast<float>(aPixel[r]));
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) tile[r][v] = _mm512_fmadd_ps(value, column[v], tile[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* target = sums + (i0 + r) * sumsStride + j0;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      const __mmask16 mask = v + 1 < V ? __mmask16(0xFFFF) : lastMask;
      _mm512_mask_storeu_ps(target + 16 * v, mask,
                            _mm512_add_ps(_mm512_maskz_loadu_ps(mask, target + 16 * v), tile[r][v]));
    }
  }
}

template <int R, typename T>
SAPIENS_AVX512 void addRowsOfTiles(const PixelRows<T>& a, const PixelRows<T>& b, int64_t pixels, int64_t i0,
                                   float* sums, int64_t sumsStride) {
  for (int64_t j0 = 0; j0 < b.count; j0 += 16 * kVectors) {
    const int vectors = static_cast<int>(std::min<int64_t>(kVectors, (b.count - j0 + 15) / 16));
    const __mmask16 lastMask = tailMask16(b.count - j0 - 16 * (vectors - 1));
    withVectorCount<kVectors>(vectors, [&](auto v) {
      addTile<R, decltype(v)::value>(a, b, pixels, i0, j0, lastMask, sums, sumsStride);
    });
  }
}

}  // namespace outer_product

/// sums (a.count x b.count, rows sumsStride floats apart) += the sum over `pixels` pixels of a^T b.
template <typename T>
SAPIENS_AVX512 void addOuterProductSums(const PixelRows<T>& a, const PixelRows<T>& b, int64_t pixels,
                                        float* sums, int64_t sumsStride) {
  using namespace outer_product;
  for (int64_t i0 = 0; i0 < a.count; i0 += kRows) {
    // withVectorCount hands a count known at compile time: here the tile's rows.
    withVectorCount<kRows>(static_cast<int>(std::min<int64_t>(kRows, a.count - i0)), [&](auto rows) {
      addRowsOfTiles<decltype(rows)::value>(a, b, pixels, i0, sums, sumsStride);
    });
  }
}

}  // namespace sapiens::detail
