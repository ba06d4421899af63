#pragma once
// Arithmetic shared by the CUDA kernels (nvcc) and their CPU references (the ordinary compiler), so that
// both compute the same float32 operations in the same order. Fused multiply-adds are explicit (fmaf is
// correctly rounded on both sides); products that feed them are not fused (__fmul_rn on the device; the
// host references are compiled without FMA contraction).

#include <math.h>

#if defined(__CUDACC__)
#define SAPIENS_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define SAPIENS_HOST_DEVICE inline
#endif

namespace sapiens::cuda::math {

SAPIENS_HOST_DEVICE float multiply(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

/// The two source cells of output cell `dst` along one axis and their weights (align_corners = false):
/// ATen's area_pixel_compute_source_index / compute_source_index_and_lambda in float32.
struct Tap {
  int index0, index1;
  float lambda0, lambda1;
};

/// `scale` = float(inputSize) / float(outputSize), computed once by the caller.
SAPIENS_HOST_DEVICE Tap bilinearTap(int dst, int inputSize, int outputSize, float scale) {
  Tap tap;
  if (inputSize == outputSize) {
    tap.index0 = tap.index1 = dst;
    tap.lambda0 = 1.0f;
    tap.lambda1 = 0.0f;
    return tap;
  }
  float source = fmaf(scale, static_cast<float>(dst) + 0.5f, -0.5f);
  if (source < 0.0f) source = 0.0f;
  int index0 = static_cast<int>(source);
  if (index0 > inputSize - 1) index0 = inputSize - 1;
  tap.index0 = index0;
  tap.index1 = index0 + (index0 < inputSize - 1 ? 1 : 0);
  tap.lambda1 = source - static_cast<float>(index0);
  if (tap.lambda1 > 1.0f) tap.lambda1 = 1.0f;
  tap.lambda0 = 1.0f - tap.lambda1;
  return tap;
}

/// w0 * t0 + w1 * t1 as fma(w0, t0, w1 * t1).
SAPIENS_HOST_DEVICE float mix(float w0, float t0, float w1, float t1) {
  return fmaf(w0, t0, multiply(w1, t1));
}

/// Whether `value` replaces `best` in a first-maximum search where a NaN counts as the maximum (numpy's
/// and torch's argmax): strictly greater, or the first NaN.
SAPIENS_HOST_DEVICE bool beats(float value, float best) {
  return value > best || (value != value && best == best);
}

SAPIENS_HOST_DEVICE bool isFinite(float v) {
  return v - v == 0.0f;
}

}  // namespace sapiens::cuda::math
