#include "pointwise_convolution.h"

#include "channels_last.h"
#include "kernel_switch.h"
#include "norm_silu_lanes.h"
#include "outer_product_sums.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace sapiens::detail {

namespace {

using norm_silu::finishStreamingStores;
using norm_silu::forEachDtype;
using norm_silu::load;
using norm_silu::storeOnce;

constexpr int64_t kMaxChannels = 128;
constexpr int kMaxVectors = kMaxChannels / 16;
constexpr int64_t kPixelsPerTask = 8192;
// Pixels whose gx pass and weight-gradient sums share the cache (64 channels: 64 KB of each operand).
constexpr int64_t kPixelsPerSum = 256;

int vectorsFor(int64_t channels) {
  return static_cast<int>((channels + 15) / 16);
}

/// The weights as float32 rows padded to whole vectors: `byOutput` (O rows of C), `byInput` (C rows of O).
struct PaddedWeights {
  int64_t inputs, outputs, inputStride, outputStride;
  std::vector<float> byOutput, byInput, bias;

  PaddedWeights(const at::Tensor& weight, const at::Tensor& biasTensor)
      : inputs(weight.size(1)),
        outputs(weight.size(0)),
        inputStride(16 * vectorsFor(inputs)),
        outputStride(16 * vectorsFor(outputs)),
        byOutput(static_cast<std::size_t>(outputs * inputStride), 0.0f),
        byInput(static_cast<std::size_t>(inputs * outputStride), 0.0f),
        bias(static_cast<std::size_t>(outputStride), 0.0f) {
    const at::Tensor w = weight.to(at::kFloat).reshape({outputs, inputs}).contiguous();
    const float* values = w.data_ptr<float>();
    for (int64_t o = 0; o < outputs; ++o)
      for (int64_t c = 0; c < inputs; ++c) {
        byOutput[static_cast<std::size_t>(o * inputStride + c)] = values[o * inputs + c];
        byInput[static_cast<std::size_t>(c * outputStride + o)] = values[o * inputs + c];
      }
    if (biasTensor.defined()) {
      const at::Tensor b = biasTensor.to(at::kFloat).contiguous();
      std::copy(b.data_ptr<float>(), b.data_ptr<float>() + outputs, bias.begin());
    }
  }
};

// P consecutive pixels' rows of n values (their channels) as float32, their lines asked for ahead: read in
// place for float32, widened once for bf16 (the kernels broadcast the values one at a time, and widening a
// lone bf16 value takes several instructions).
template <int P>
struct RowsInFloat {
  alignas(64) float widened[P][kMaxChannels];
  const float* row[P];

  template <typename T>
  SAPIENS_AVX512 RowsInFloat(const T* first, int64_t n) {
    for (int p = 0; p < P; ++p) {
      const T* in = first + p * n;
      for (int64_t i = 0; i < n; i += 16) prefetchAhead(in + i);
      if constexpr (std::is_same_v<T, float>) {
        row[p] = in;
      } else {
        for (int64_t i = 0; i < n; i += 16) _mm512_storeu_ps(widened[p] + i, load(in + i, tailMask16(n - i)));
        row[p] = widened[p];
      }
    }
  }

  SAPIENS_AVX512 __m512 broadcast(int p, int64_t i) const { return _mm512_set1_ps(row[p][i]); }
};

// Pixels a kernel takes at once so that its products form independent chains (one pixel's 16 products into
// one vector wait on each other: 4 cycles each), while its vectors still fit the 32 registers.
constexpr int pixelsAtOnce(int vectors) {
  return vectors <= 2 ? 4 : vectors <= 4 ? 2 : 1;
}

// y = W x + b for P pixels from `pixel`; OV output vectors.
template <int OV, int P, typename T>
SAPIENS_AVX512 void forwardPixelBlock(const T* x, T* y, int64_t pixel, const PaddedWeights& w) {
  const int64_t inputs = w.inputs, outputs = w.outputs;
  __m512 acc[P][OV];
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < OV; ++v) acc[p][v] = _mm512_loadu_ps(w.bias.data() + 16 * v);
  const RowsInFloat<P> in(x + pixel * inputs, inputs);
  for (int64_t c = 0; c < inputs; ++c) {
    __m512 value[P];
    for (int p = 0; p < P; ++p) value[p] = in.broadcast(p, c);
    const float* weights = w.byInput.data() + c * w.outputStride;
    for (int v = 0; v < OV; ++v) {
      const __m512 column = _mm512_loadu_ps(weights + 16 * v);
      for (int p = 0; p < P; ++p) acc[p][v] = _mm512_fmadd_ps(column, value[p], acc[p][v]);
    }
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < OV; ++v) {
      T* out = y + (pixel + p) * outputs + 16 * v;
      storeOnce(out, tailMask16(outputs - 16 * v), acc[p][v]);
    }
}

// y = W x + b for pixels [begin, end); OV output vectors.
template <int OV, typename T>
SAPIENS_AVX512 void forwardPixels(const T* x, T* y, int64_t begin, int64_t end, const PaddedWeights& w) {
  constexpr int P = pixelsAtOnce(OV);
  int64_t pixel = begin;
  for (; pixel + P <= end; pixel += P) forwardPixelBlock<OV, P>(x, y, pixel, w);
  for (; pixel < end; ++pixel) forwardPixelBlock<OV, 1>(x, y, pixel, w);
  finishStreamingStores();
}

/// One task's sums for the weights' and the bias's gradients: (O x C padded) and (O padded) floats.
struct GradientSums {
  std::vector<float> weights, bias;
};

// gx = W^T gy for P pixels from `pixel`; CV input vectors. Asks for x's lines too, which the weights'
// gradient reads next.
template <int CV, int P, typename T>
SAPIENS_AVX512 void inputGradientBlock(const T* x, const T* gy, T* gx, int64_t pixel,
                                       const PaddedWeights& w) {
  const int64_t inputs = w.inputs, outputs = w.outputs;
  __m512 gradient[P][CV];
  for (int p = 0; p < P; ++p) {
    for (int v = 0; v < CV; ++v) {
      prefetchAhead(x + (pixel + p) * inputs + 16 * v);
      gradient[p][v] = _mm512_setzero_ps();
    }
  }
  const RowsInFloat<P> g(gy + pixel * outputs, outputs);
  for (int64_t o = 0; o < outputs; ++o) {
    __m512 go[P];
    for (int p = 0; p < P; ++p) go[p] = g.broadcast(p, o);
    const float* weights = w.byOutput.data() + o * w.inputStride;
    for (int v = 0; v < CV; ++v) {
      const __m512 column = _mm512_loadu_ps(weights + 16 * v);
      for (int p = 0; p < P; ++p) gradient[p][v] = _mm512_fmadd_ps(column, go[p], gradient[p][v]);
    }
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < CV; ++v)
      storeOnce(gx + (pixel + p) * inputs + 16 * v, tailMask16(inputs - 16 * v), gradient[p][v]);
}

/// The sums of gy x^T and gy of a layer with one input vector and at most 16 outputs, in registers.
struct NarrowSums {
  __m512 weight[16], bias;
};

// The backward pass for one input vector and at most 16 outputs (the fixture-sized heads) in one pass: each
// output's weight-gradient sum stays in a register over the whole range.
template <int P, typename T>
SAPIENS_AVX512 inline void backwardNarrowBlock(const T* x, const T* gy, T* gx, int64_t pixel,
                                               const PaddedWeights& w, NarrowSums& sums) {
  const int64_t inputs = w.inputs, outputs = w.outputs;
  __m512 row[P], gradient[P];
  for (int p = 0; p < P; ++p) {
    prefetchAhead(x + (pixel + p) * inputs);
    row[p] = load(x + (pixel + p) * inputs, tailMask16(inputs));
    gradient[p] = _mm512_setzero_ps();
  }
  const RowsInFloat<P> g(gy + pixel * outputs, outputs);
#pragma GCC unroll 16
  for (int o = 0; o < 16; ++o) {
    if (o >= outputs) break;
    const __m512 column = _mm512_loadu_ps(w.byOutput.data() + o * w.inputStride);
    for (int p = 0; p < P; ++p) {
      const __m512 go = g.broadcast(p, o);
      gradient[p] = _mm512_fmadd_ps(column, go, gradient[p]);
      sums.weight[o] = _mm512_fmadd_ps(row[p], go, sums.weight[o]);
    }
  }
  for (int p = 0; p < P; ++p) {
    storeOnce(gx + (pixel + p) * inputs, tailMask16(inputs), gradient[p]);
    sums.bias = _mm512_add_ps(load(gy + (pixel + p) * outputs, tailMask16(outputs)), sums.bias);
  }
}

SAPIENS_AVX512 inline void addInto(float* into, __m512 lanes) {
  _mm512_storeu_ps(into, _mm512_add_ps(_mm512_loadu_ps(into), lanes));
}

template <typename T>
SAPIENS_AVX512 void backwardNarrowPixels(const T* x, const T* gy, T* gx, int64_t begin, int64_t end,
                                         const PaddedWeights& w, GradientSums& sums) {
  NarrowSums narrow;
  for (__m512& sum : narrow.weight) sum = _mm512_setzero_ps();
  narrow.bias = _mm512_setzero_ps();
  int64_t pixel = begin;
  for (; pixel + 4 <= end; pixel += 4) backwardNarrowBlock<4>(x, gy, gx, pixel, w, narrow);
  for (; pixel < end; ++pixel) backwardNarrowBlock<1>(x, gy, gx, pixel, w, narrow);
  finishStreamingStores();
  for (int64_t o = 0; o < w.outputs; ++o) addInto(sums.weights.data() + o * w.inputStride, narrow.weight[o]);
  addInto(sums.bias.data(), narrow.bias);
}

// gx = W^T gy, and the sums of gy x^T and gy, for pixels [begin, end); CV input vectors. In chunks: the
// sums read x and gy from the cache, just after the chunk's gx pass has read gy and asked for x.
template <int CV, typename T>
SAPIENS_AVX512 void backwardPixels(const T* x, const T* gy, T* gx, int64_t begin, int64_t end,
                                   const PaddedWeights& w, GradientSums& sums) {
  if constexpr (CV == 1) {
    if (w.outputs <= 16) return backwardNarrowPixels(x, gy, gx, begin, end, w, sums);
  }
  constexpr int P = pixelsAtOnce(CV);
  const T one(1.0f);
  for (int64_t chunk = begin; chunk < end; chunk += kPixelsPerSum) {
    const int64_t chunkEnd = std::min(end, chunk + kPixelsPerSum);
    int64_t pixel = chunk;
    for (; pixel + P <= chunkEnd; pixel += P) inputGradientBlock<CV, P>(x, gy, gx, pixel, w);
    for (; pixel < chunkEnd; ++pixel) inputGradientBlock<CV, 1>(x, gy, gx, pixel, w);
    const PixelRows<T> gradient{gy + chunk * w.outputs, w.outputs, w.outputs};
    addOuterProductSums(gradient, PixelRows<T>{x + chunk * w.inputs, w.inputs, w.inputs}, chunkEnd - chunk,
                        sums.weights.data(), w.inputStride);
    addOuterProductSums(PixelRows<T>{&one, 0, 1}, gradient, chunkEnd - chunk, sums.bias.data(), 0);
  }
  finishStreamingStores();
}

/// Runs `block(task, begin, end)` over the pixels in blocks, in parallel.
template <typename Block>
void forEachBlock(int64_t pixels, const Block& block) {
  const int64_t tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
  at::parallel_for(0, tasks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task)
      block(task, task * kPixelsPerTask, std::min(pixels, (task + 1) * kPixelsPerTask));
  });
}

int64_t pixelsOf(const at::Tensor& x) {
  return x.size(0) * x.size(2) * x.size(3);
}

at::Tensor forwardPass(const at::Tensor& x, const PaddedWeights& w) {
  at::Tensor y = at::empty({x.size(0), w.outputs, x.size(2), x.size(3)},
                           x.options().memory_format(at::MemoryFormat::ChannelsLast));
  forEachDtype(x, [&](auto* in) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    T* out = y.data_ptr<T>();
    withVectorCount<kMaxVectors>(vectorsFor(w.outputs), [&](auto vectors) {
      forEachBlock(pixelsOf(x), [&](int64_t, int64_t begin, int64_t end) {
        forwardPixels<decltype(vectors)::value>(in, out, begin, end, w);
      });
    });
  });
  return y;
}

struct Gradients {
  at::Tensor input, weight, bias;
};

Gradients backwardPass(const at::Tensor& x, const at::Tensor& gradOutput, const PaddedWeights& w) {
  const at::Tensor gy = gradOutput.to(x.scalar_type()).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor gx = at::empty_like(x, at::MemoryFormat::ChannelsLast);
  const int64_t pixels = pixelsOf(x), tasks = (pixels + kPixelsPerTask - 1) / kPixelsPerTask;
  std::vector<GradientSums> sums(static_cast<std::size_t>(tasks));
  forEachDtype(x, [&](auto* in) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    const T* g = gy.data_ptr<T>();
    T* out = gx.data_ptr<T>();
    withVectorCount<kMaxVectors>(vectorsFor(w.inputs), [&](auto vectors) {
      forEachBlock(pixels, [&](int64_t task, int64_t begin, int64_t end) {
        GradientSums& s = sums[static_cast<std::size_t>(task)];
        s.weights.assign(static_cast<std::size_t>(w.outputs * w.inputStride), 0.0f);
        s.bias.assign(static_cast<std::size_t>(w.outputStride), 0.0f);
        backwardPixels<decltype(vectors)::value>(in, g, out, begin, end, w, s);
      });
    });
  });
  std::vector<double> weightTotal(static_cast<std::size_t>(w.outputs * w.inputs), 0.0),
      biasTotal(static_cast<std::size_t>(w.outputs), 0.0);
  for (const GradientSums& s : sums)
    for (int64_t o = 0; o < w.outputs; ++o) {
      biasTotal[static_cast<std::size_t>(o)] += s.bias[static_cast<std::size_t>(o)];
      for (int64_t c = 0; c < w.inputs; ++c)
        weightTotal[static_cast<std::size_t>(o * w.inputs + c)] +=
            s.weights[static_cast<std::size_t>(o * w.inputStride + c)];
    }
  const auto asTensor = [](const std::vector<double>& values) {
    return at::tensor(at::ArrayRef<double>(values), at::kDouble).to(at::kFloat);
  };
  return {gx, asTensor(weightTotal).view({w.outputs, w.inputs, 1, 1}), asTensor(biasTotal)};
}

struct PointwiseConvolutionFunction : torch::autograd::Function<PointwiseConvolutionFunction> {
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x,
                            const at::Tensor& weight, const at::Tensor& bias) {
    context->save_for_backward({x, weight, bias});
    return forwardPass(x, PaddedWeights(weight, bias));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &bias = saved[2];
    const Gradients g = backwardPass(x, gradients[0], PaddedWeights(weight, bias));
    return {g.input, g.weight.to(weight.scalar_type()), g.bias.to(bias.scalar_type())};
  }
};

bool switchedOn() {
  static const bool on = !switchedOffByEnvironment("SAPIENS_POINTWISE_CONV");
  return on;
}

// For bf16 products of more than 64 x 32 channels (C x O over 2048; measured at 64 x 64, 64 x 29, 32 x 32
// and 16 x 16) oneDNN's bf16 matmul (AMX tiles where present) is faster (the seg head's 64 x 64 layers at
// 2 x 1024 x 768: 43 + 113 ms against 50 + 160 ms here, forward + backward); in float32 and below that
// this pass is (its 64 -> 29 output layer: 26 + 86 ms against 68 + 105 ms; 16 x 16: 45 + 90 ms against
// 145 + 80 ms bf16 and 130 + 250 ms float32).
bool fasterThanMatmul(const at::Tensor& x, const at::Tensor& weight) {
  return x.scalar_type() != at::kBFloat16 || x.size(1) * weight.size(0) <= 64 * 32;
}

bool floatOrBf16(const at::Tensor& t) {
  return t.scalar_type() == at::kFloat || t.scalar_type() == at::kBFloat16;
}

}  // namespace

bool pointwiseConvolutionApplies(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  static const bool cpuHasIt = cpu::hasAvx512();
  return cpuHasIt && x.is_cpu() && x.dim() == 4 && weight.dim() == 4 && weight.size(2) == 1 &&
         weight.size(3) == 1 && weight.size(1) == x.size(1) && x.size(1) <= kMaxChannels &&
         weight.size(0) <= kMaxChannels && x.numel() > 0 && floatOrBf16(x) && floatOrBf16(weight) &&
         (!bias.defined() || (floatOrBf16(bias) && bias.numel() == weight.size(0))) &&
         isChannelsLastOnly(x) && fasterThanMatmul(x, weight) && switchedOn();
}

at::Tensor pointwiseConvolution(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  TORCH_CHECK(pointwiseConvolutionApplies(x, weight, bias), "pointwiseConvolution: unsupported operands");
  const bool training = c10::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad() ||
                                                        (bias.defined() && bias.requires_grad()));
  // Autograd's custom functions take defined tensors only: a missing bias is a zero one without gradient.
  if (training)
    return PointwiseConvolutionFunction::apply(
        x, weight, bias.defined() ? bias : at::zeros({weight.size(0)}, weight.options()));
  return forwardPass(x, PaddedWeights(weight, bias));
}

}  // namespace sapiens::detail
