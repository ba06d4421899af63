#include "instance_norm_silu.h"

#include "exp_vector.h"
#include "kernel_switch.h"
#include "vector_lanes.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

// GCC 12 reports the deliberately undefined pass-through operand inside its AVX-512 intrinsics as
// (maybe-)uninitialized once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace sapiens::detail {

namespace {

// Float lanes sum at most this many elements before their total moves into a double.
constexpr int64_t kChunk = 4096;

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

SAPIENS_AVX512 inline __m512 sigmoid(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

SAPIENS_AVX512 inline double total(__m512 lanes) {
  return static_cast<double>(_mm512_reduce_add_ps(lanes));
}

struct PlaneStats {
  float mean;
  float inverseStd;
};

// Mean and 1 / sqrt(biased variance + eps) from sums shifted by the first element (no cancellation when
// the mean is large against the spread).
template <typename T>
SAPIENS_AVX512 PlaneStats planeStats(const T* x, int64_t n, double eps) {
  const __m512 shift = _mm512_set1_ps(static_cast<float>(x[0]));
  double sum = 0, squares = 0;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t end = std::min(n, start + kChunk);
    __m512 s = _mm512_setzero_ps(), q = _mm512_setzero_ps();
    for (int64_t i = start; i < end; i += 16) {
      const __mmask16 mask = tailMask16(end - i);
      const __m512 d = _mm512_maskz_sub_ps(mask, load(x + i, mask), shift);
      s = _mm512_add_ps(s, d);
      q = _mm512_fmadd_ps(d, d, q);
    }
    sum += total(s);
    squares += total(q);
  }
  const double shiftedMean = sum / static_cast<double>(n);
  double variance = squares / static_cast<double>(n) - shiftedMean * shiftedMean;
  if (variance < 0) variance = 0;  // rounding; NaN (an infinity in the plane) stays NaN
  return {static_cast<float>(static_cast<double>(static_cast<float>(x[0])) + shiftedMean),
          static_cast<float>(1.0 / std::sqrt(variance + eps))};
}

template <typename T>
SAPIENS_AVX512 void forwardPlane(const T* x, T* y, int64_t n, PlaneStats stats) {
  const __m512 mean = _mm512_set1_ps(stats.mean), scale = _mm512_set1_ps(stats.inverseStd);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tailMask16(n - i);
    const __m512 normalised = _mm512_mul_ps(_mm512_sub_ps(load(x + i, mask), mean), scale);
    store(y + i, mask, _mm512_mul_ps(normalised, sigmoid(normalised)));
  }
}

// d silu(z) / dz = s (1 + z (1 - s)), s = sigmoid(z), times the output gradient.
SAPIENS_AVX512 inline __m512 siluGradient(__m512 normalised, __m512 gradOutput) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 s = sigmoid(normalised);
  return _mm512_mul_ps(gradOutput, _mm512_mul_ps(s, _mm512_fmadd_ps(normalised, _mm512_sub_ps(one, s), one)));
}

// The norm's backward: dx = inverseStd (g - mean(g) - z mean(g z)), g the gradient at the norm's output.
template <typename T>
SAPIENS_AVX512 void backwardPlane(const T* x, const T* gy, T* gx, int64_t n, PlaneStats stats) {
  const __m512 mean = _mm512_set1_ps(stats.mean), scale = _mm512_set1_ps(stats.inverseStd);
  double sumG = 0, sumGz = 0;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t end = std::min(n, start + kChunk);
    __m512 g = _mm512_setzero_ps(), gz = _mm512_setzero_ps();
    for (int64_t i = start; i < end; i += 16) {
      const __mmask16 mask = tailMask16(end - i);
      const __m512 z = _mm512_mul_ps(_mm512_sub_ps(load(x + i, mask), mean), scale);
      const __m512 d = _mm512_maskz_mov_ps(mask, siluGradient(z, load(gy + i, mask)));
      g = _mm512_add_ps(g, d);
      gz = _mm512_fmadd_ps(d, z, gz);
    }
    sumG += total(g);
    sumGz += total(gz);
  }
  const __m512 meanG = _mm512_set1_ps(static_cast<float>(sumG / static_cast<double>(n)));
  const __m512 meanGz = _mm512_set1_ps(static_cast<float>(sumGz / static_cast<double>(n)));
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = tailMask16(n - i);
    const __m512 z = _mm512_mul_ps(_mm512_sub_ps(load(x + i, mask), mean), scale);
    const __m512 d = siluGradient(z, load(gy + i, mask));
    store(gx + i, mask, _mm512_mul_ps(scale, _mm512_fnmadd_ps(z, meanGz, _mm512_sub_ps(d, meanG))));
  }
}

// Runs `perPlane(plane)` over the B x C planes in parallel.
template <typename F>
void forEachPlane(int64_t planes, int64_t planeSize, const F& perPlane) {
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(planeSize, 1));
  at::parallel_for(0, planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) perPlane(plane);
  });
}

// Calls `f` with x's data as const float* or const c10::BFloat16*.
template <typename F>
void forEachDtype(const at::Tensor& x, const F& f) {
  if (x.scalar_type() == at::kBFloat16)
    f(static_cast<const c10::BFloat16*>(x.data_ptr<c10::BFloat16>()));
  else
    f(static_cast<const float*>(x.data_ptr<float>()));
}

// (B, C, H, W) contiguous x: y and each plane's statistics (float32, B x C x 2).
at::Tensor forwardPass(const at::Tensor& x, double eps, at::Tensor& stats) {
  const int64_t planes = x.size(0) * x.size(1), n = x.size(2) * x.size(3);
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  stats = at::empty({planes, 2}, x.options().dtype(at::kFloat));
  auto* statsOut = reinterpret_cast<PlaneStats*>(stats.data_ptr<float>());
  forEachDtype(x, [&](auto* in) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    T* out = y.data_ptr<T>();
    forEachPlane(planes, n, [&](int64_t p) {
      statsOut[p] = planeStats(in + p * n, n, eps);
      forwardPlane(in + p * n, out + p * n, n, statsOut[p]);
    });
  });
  return y;
}

at::Tensor backwardPass(const at::Tensor& x, const at::Tensor& stats, const at::Tensor& gradOutput) {
  const int64_t planes = x.size(0) * x.size(1), n = x.size(2) * x.size(3);
  const at::Tensor gy = gradOutput.to(x.scalar_type()).contiguous();
  at::Tensor gx = at::empty_like(x, at::MemoryFormat::Contiguous);
  const auto* statsIn = reinterpret_cast<const PlaneStats*>(stats.data_ptr<float>());
  forEachDtype(x, [&](auto* in) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    const T* g = gy.data_ptr<T>();
    T* out = gx.data_ptr<T>();
    forEachPlane(planes, n,
                 [&](int64_t p) { backwardPlane(in + p * n, g + p * n, out + p * n, n, statsIn[p]); });
  });
  return gx;
}

struct InstanceNormSiluFunction : torch::autograd::Function<InstanceNormSiluFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x, double eps) {
    const at::Tensor input = x.contiguous();
    at::Tensor stats;
    at::Tensor y = forwardPass(input, eps, stats);
    context->save_for_backward({input, stats});
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    return {backwardPass(saved[0], saved[1], gradients[0]), at::Tensor()};
  }
};

bool switchedOn() {
  static const bool on = !switchedOffByEnvironment("SAPIENS_FUSED_INSTANCE_NORM");
  return on;
}

}  // namespace

bool instanceNormSiluApplies(const at::Tensor& x) {
  static const bool cpuHasIt = cpu::hasAvx512();
  return cpuHasIt && x.is_cpu() && x.dim() == 4 && x.numel() > 0 &&
         (x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16) && switchedOn();
}

at::Tensor instanceNormSilu(const at::Tensor& x, double eps) {
  TORCH_CHECK(instanceNormSiluApplies(x), "instanceNormSilu: unsupported tensor or CPU");
  if (c10::GradMode::is_enabled() && x.requires_grad()) return InstanceNormSiluFunction::apply(x, eps);
  at::Tensor stats;
  return forwardPass(x.contiguous(), eps, stats);
}

}  // namespace sapiens::detail
