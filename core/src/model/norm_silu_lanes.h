#pragma once
// What the fused InstanceNorm + SiLU kernels share (instance_norm_silu.cpp for NCHW tensors,
// instance_norm_silu_channels_last.cpp for NHWC ones): float32 lanes in and out of float32 or bf16 memory,
// sigmoid and SiLU's gradient, and a plane's statistics. Include only from files compiled for x86-64.

#include "exp_vector.h"
#include "vector_lanes.h"

#include <ATen/core/Tensor.h>
#include <c10/util/BFloat16.h>

#include <cmath>
#include <cstdint>

// GCC 12 reports the deliberately undefined pass-through operand inside its AVX-512 intrinsics as
// (maybe-)uninitialized once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace sapiens::detail::norm_silu {

SAPIENS_AVX512 inline __m512 load(const float* p, __mmask16 mask) {
  return _mm512_maskz_loadu_ps(mask, p);
}

SAPIENS_AVX512 inline __m512 load(const c10::BFloat16* p, __mmask16 mask) {
  return loadBf16(reinterpret_cast<const std::uint16_t*>(p), mask);
}

SAPIENS_AVX512 inline void store(float* p, __mmask16 mask, __m512 x) {
  _mm512_mask_storeu_ps(p, mask, x);
}

// Rounded to nearest even as c10::BFloat16 does, NaN kept NaN; without AVX512_BF16's conversion.
SAPIENS_AVX512 inline void store(c10::BFloat16* p, __mmask16 mask, __m512 x) {
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7FFF))), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  rounded = _mm512_mask_mov_epi32(rounded, nan, _mm512_set1_epi32(0x7FC0));
  _mm256_mask_storeu_epi16(p, mask, _mm512_cvtepi32_epi16(rounded));
}

/// store() for a full-size pass's output, written once and read by a later pass: whole, aligned float32
/// vectors go around the caches (no read of the line before the write, no eviction of what the pass
/// reads); the rest is prefetched for writing and stored. Passes end with finishStreamingStores().
SAPIENS_AVX512 inline void storeOnce(float* p, __mmask16 mask, __m512 x) {
  if (mask == __mmask16(0xFFFF) && reinterpret_cast<std::uintptr_t>(p) % 64 == 0) {
    _mm512_stream_ps(p, x);
  } else {
    prefetchAheadForWrite(p);
    store(p, mask, x);
  }
}

SAPIENS_AVX512 inline void storeOnce(c10::BFloat16* p, __mmask16 mask, __m512 x) {
  prefetchAheadForWrite(p);
  store(p, mask, x);
}

inline void finishStreamingStores() {
  _mm_sfence();
}

SAPIENS_AVX512 inline __m512 sigmoid(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

SAPIENS_AVX512 inline double total(__m512 lanes) {
  return static_cast<double>(_mm512_reduce_add_ps(lanes));
}

// d silu(z) / dz = s (1 + z (1 - s)), s = sigmoid(z), times the output gradient.
SAPIENS_AVX512 inline __m512 siluGradient(__m512 normalised, __m512 gradOutput) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 s = sigmoid(normalised);
  return _mm512_mul_ps(gradOutput, _mm512_mul_ps(s, _mm512_fmadd_ps(normalised, _mm512_sub_ps(one, s), one)));
}

/// One plane's (one sample's channel's) mean and 1 / sqrt(biased variance + eps).
struct PlaneStats {
  float mean;
  float inverseStd;
};

/// A plane's statistics from the sums of its n elements shifted by `shift` (its first element: no
/// cancellation when the mean is large against the spread).
inline PlaneStats statsFromShiftedSums(float shift, double sum, double squares, int64_t n, double eps) {
  const double shiftedMean = sum / static_cast<double>(n);
  double variance = squares / static_cast<double>(n) - shiftedMean * shiftedMean;
  if (variance < 0) variance = 0;  // rounding; NaN (an infinity in the plane) stays NaN
  return {static_cast<float>(static_cast<double>(shift) + shiftedMean),
          static_cast<float>(1.0 / std::sqrt(variance + eps))};
}

/// Calls `f` with x's data as const float* or const c10::BFloat16*.
template <typename F>
void forEachDtype(const at::Tensor& x, const F& f) {
  if (x.scalar_type() == at::kBFloat16)
    f(static_cast<const c10::BFloat16*>(x.data_ptr<c10::BFloat16>()));
  else
    f(static_cast<const float*>(x.data_ptr<float>()));
}

}  // namespace sapiens::detail::norm_silu
