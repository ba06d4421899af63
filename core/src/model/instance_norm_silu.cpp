#include "instance_norm_silu.h"

#include "channels_last.h"
#include "instance_norm_silu_channels_last.h"
#include "kernel_switch.h"
#include "norm_silu_lanes.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace sapiens::detail {

namespace {

using namespace norm_silu;

// Float lanes sum at most this many elements before their total moves into a double.
constexpr int64_t kChunk = 4096;

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
  return statsFromShiftedSums(static_cast<float>(x[0]), sum, squares, n, eps);
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

// (B, C, H, W) contiguous x: y and each plane's statistics (float32, B x C x 2).
at::Tensor planarForward(const at::Tensor& x, double eps, at::Tensor& stats) {
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

at::Tensor planarBackward(const at::Tensor& x, const at::Tensor& stats, const at::Tensor& gradOutput) {
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

// x as the passes read it: channels-last as it is, anything else made NCHW-contiguous.
at::Tensor inPassLayout(const at::Tensor& x) {
  return isChannelsLastOnly(x) ? x : x.contiguous();
}

at::Tensor forwardPass(const at::Tensor& x, double eps, at::Tensor& stats) {
  return isChannelsLastOnly(x) ? channelsLastNormSiluForward(x, eps, stats) : planarForward(x, eps, stats);
}

at::Tensor backwardPass(const at::Tensor& x, const at::Tensor& stats, const at::Tensor& gradOutput) {
  return isChannelsLastOnly(x) ? channelsLastNormSiluBackward(x, stats, gradOutput)
                               : planarBackward(x, stats, gradOutput);
}

struct InstanceNormSiluFunction : torch::autograd::Function<InstanceNormSiluFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x, double eps) {
    const at::Tensor input = inPassLayout(x);
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
  return forwardPass(inPassLayout(x), eps, stats);
}

}  // namespace sapiens::detail
