#pragma once
// Small pieces the AVX-512 kernels share: the mask of a loop's last, partial vector of 16 floats, and
// bf16 in and out of float32 lanes (loads widen exactly; stores and `roundedToBf16` round to nearest even,
// as c10::BFloat16 does). Include only from files compiled for x86-64; the bf16 stores and roundings need
// AVX512_BF16, the load AVX-512 alone.

#include <immintrin.h>

#include <cstdint>
#include <type_traits>

#define SAPIENS_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))
#define SAPIENS_AVX512_BF16 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx512bf16,avx2,fma")))

namespace sapiens::detail {

/// The lanes of a 16-float vector that hold the `remaining` values left (all 16 when 16 or more).
inline __mmask16 tailMask16(std::int64_t remaining) {
  return remaining >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << remaining) - 1u);
}

SAPIENS_AVX512 inline __m512 loadBf16(const std::uint16_t* p, __mmask16 mask) {
  const __m256i bits = _mm256_maskz_loadu_epi16(mask, p);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

SAPIENS_AVX512_BF16 inline void storeBf16(std::uint16_t* p, __mmask16 mask, __m512 x) {
  _mm256_mask_storeu_epi16(p, mask, reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x)));
}

/// The value a bf16 tensor would hold: rounded to bf16, back in float32 lanes.
SAPIENS_AVX512_BF16 inline __m512 roundedToBf16(__m512 x) {
  const __m256i bits = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

/// How far ahead the streaming kernels ask for their input: on the cloud machines measured (Emerald
/// Rapids guests) the hardware prefetcher leaves a loop that walks a large tensor once waiting on memory,
/// and asking for the line 16 KB ahead made such passes 2-3x faster.
inline constexpr std::int64_t kPrefetchBytes = 16384;

/// Asks for the cache line kPrefetchBytes past `p` (a hint: no fault past the end of the data).
inline void prefetchAhead(const void* p) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + kPrefetchBytes),
               _MM_HINT_T0);
}

/// The same for a line about to be written (prefetchw: no second trip to take ownership).
inline void prefetchAheadForWrite(const void* p) {
  _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(p) + kPrefetchBytes),
               _MM_HINT_ET0);
}

/// Calls f(std::integral_constant<int, V>()) with V = `vectors` clamped to 1 .. Max: kernels that keep V
/// vectors in registers get the count at compile time.
template <int Max, typename F>
void withVectorCount(int vectors, const F& f) {
  if constexpr (Max > 1) {
    if (vectors < Max) return withVectorCount<Max - 1>(vectors, f);
  }
  f(std::integral_constant<int, Max>());
}

}  // namespace sapiens::detail
