#include "pipeline/seg_argmax.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

// This file is compiled with -ffp-contract=off (core/CMakeLists.txt): every fused multiply-add below is
// written out, so that the compiler cannot add others and change the rounding.

namespace sapiens::detail {
namespace {

/// Source rows or columns and their weights for each output row or column, as ATen's
/// compute_source_index_and_lambda computes them.
struct AxisWeights {
  std::vector<std::int64_t> index0, index1;
  std::vector<float> lambda0, lambda1;
};

AxisWeights axisWeights(int inputSize, int outputSize, const BilinearRounding& rounding) {
  AxisWeights axis;
  const auto n = static_cast<std::size_t>(outputSize);
  axis.index0.resize(n);
  axis.index1.resize(n);
  axis.lambda0.resize(n);
  axis.lambda1.resize(n);
  // area_pixel_compute_scale: static_cast<float>(input_size) / output_size, in float.
  const float scale = static_cast<float>(inputSize) / static_cast<float>(outputSize);
  for (int o = 0; o < outputSize; ++o) {
    const auto slot = static_cast<std::size_t>(o);
    if (inputSize == outputSize) {
      axis.index0[slot] = axis.index1[slot] = o;
      axis.lambda0[slot] = 1.0f;
      axis.lambda1[slot] = 0.0f;
      continue;
    }
    std::int64_t index0;
    float lambda1;
    if (rounding.doubleIndex) {
      const double ratio = scale;
      double source = rounding.fmaIndex ? std::fma(ratio, o + 0.5, -0.5) : ratio * (o + 0.5) - 0.5;
      if (source < 0.0) source = 0.0;
      index0 = std::min(static_cast<std::int64_t>(source), static_cast<std::int64_t>(inputSize) - 1);
      lambda1 = static_cast<float>(std::clamp(source - static_cast<double>(index0), 0.0, 1.0));
    } else {
      float source = rounding.fmaIndex ? std::fma(scale, o + 0.5f, -0.5f) : scale * (o + 0.5f) - 0.5f;
      if (source < 0.0f) source = 0.0f;
      index0 = std::min(static_cast<std::int64_t>(source), static_cast<std::int64_t>(inputSize) - 1);
      lambda1 = std::clamp(source - static_cast<float>(index0), 0.0f, 1.0f);
    }
    axis.index0[slot] = index0;
    axis.index1[slot] = index0 + (index0 < inputSize - 1 ? 1 : 0);
    axis.lambda1[slot] = lambda1;
    axis.lambda0[slot] = 1.0f - lambda1;
  }
  return axis;
}

template <bool Fma>
inline __attribute__((always_inline)) float mix(float t0, float w0, float t1, float w1) {
  if constexpr (Fma) {
    return __builtin_fmaf(t0, w0, t1 * w1);
  } else {
    return t0 * w0 + t1 * w1;
  }
}

struct Job {
  const float* logits;
  int classes, height, width, outWidth;
  std::uint8_t* labels;
  std::size_t labelStride;
  const AxisWeights* rows;
  const AxisWeights* columns;
};

template <bool Fma>
inline __attribute__((always_inline)) void labelRows(const Job& job, std::int64_t begin, std::int64_t end) {
  const std::size_t outWidth = static_cast<std::size_t>(job.outWidth);
  const std::size_t rowFloats = static_cast<std::size_t>(job.classes) * outWidth;
  const std::size_t plane = static_cast<std::size_t>(job.height) * static_cast<std::size_t>(job.width);
  // Two input rows, interpolated horizontally for every class: consecutive output rows share them.
  std::vector<float> rows(2 * rowFloats);
  std::array<std::int64_t, 2> rowOf{-1, -1};
  std::vector<float> best(outWidth);
  const std::int64_t* column0 = job.columns->index0.data();
  const std::int64_t* column1 = job.columns->index1.data();
  const float* columnLambda0 = job.columns->lambda0.data();
  const float* columnLambda1 = job.columns->lambda1.data();

  const auto fill = [&](int slot, std::int64_t inputRow) {
    float* dst = rows.data() + static_cast<std::size_t>(slot) * rowFloats;
    for (int c = 0; c < job.classes; ++c) {
      const float* src = job.logits + static_cast<std::size_t>(c) * plane +
                         static_cast<std::size_t>(inputRow) * static_cast<std::size_t>(job.width);
      float* out = dst + static_cast<std::size_t>(c) * outWidth;
      for (std::size_t x = 0; x < outWidth; ++x) {
        out[x] = mix<Fma>(src[column0[x]], columnLambda0[x], src[column1[x]], columnLambda1[x]);
      }
    }
    rowOf[static_cast<std::size_t>(slot)] = inputRow;
  };

  for (std::int64_t y = begin; y < end; ++y) {
    const auto slotY = static_cast<std::size_t>(y);
    const std::int64_t row0 = job.rows->index0[slotY];
    const std::int64_t row1 = job.rows->index1[slotY];
    int top = rowOf[0] == row0 ? 0 : (rowOf[1] == row0 ? 1 : -1);
    if (top < 0) {
      top = rowOf[0] == row1 ? 1 : 0;
      fill(top, row0);
    }
    int bottom = rowOf[static_cast<std::size_t>(top)] == row1 ? top : (rowOf[1 - top] == row1 ? 1 - top : -1);
    if (bottom < 0) {
      bottom = 1 - top;
      fill(bottom, row1);
    }
    const float lambda0 = job.rows->lambda0[slotY];
    const float lambda1 = job.rows->lambda1[slotY];
    const float* t = rows.data() + static_cast<std::size_t>(top) * rowFloats;
    const float* b = rows.data() + static_cast<std::size_t>(bottom) * rowFloats;
    std::uint8_t* label = job.labels + static_cast<std::size_t>(y) * job.labelStride;
    float* bestValue = best.data();
    for (std::size_t x = 0; x < outWidth; ++x) {
      bestValue[x] = mix<Fma>(t[x], lambda0, b[x], lambda1);
      label[x] = 0;
    }
    for (int c = 1; c < job.classes; ++c) {
      const float* tc = t + static_cast<std::size_t>(c) * outWidth;
      const float* bc = b + static_cast<std::size_t>(c) * outWidth;
      const auto classLabel = static_cast<std::uint8_t>(c);
      for (std::size_t x = 0; x < outWidth; ++x) {
        const float value = mix<Fma>(tc[x], lambda0, bc[x], lambda1);
        // First maximum wins; a NaN beats every number, and the first NaN stays.
        const bool take = value > bestValue[x] || (value != value && bestValue[x] == bestValue[x]);
        bestValue[x] = take ? value : bestValue[x];
        label[x] = take ? classLabel : label[x];
      }
    }
  }
}

void labelRowsPlain(const Job& job, std::int64_t begin, std::int64_t end) {
  labelRows<false>(job, begin, end);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SAPIENS_SEG_ARGMAX_FMA_TARGET 1
// The same loops with hardware FMA instructions; only called when the CPU has them.
__attribute__((target("fma"))) void labelRowsFmaHardware(const Job& job, std::int64_t begin,
                                                         std::int64_t end) {
  labelRows<true>(job, begin, end);
}
#endif

// Correct on any CPU (a library call per fma where the instruction set lacks one).
void labelRowsFmaPortable(const Job& job, std::int64_t begin, std::int64_t end) {
  labelRows<true>(job, begin, end);
}

using RowFunction = void (*)(const Job&, std::int64_t, std::int64_t);

RowFunction rowFunction(const BilinearRounding& rounding) {
  if (!rounding.fmaCombine) return labelRowsPlain;
#ifdef SAPIENS_SEG_ARGMAX_FMA_TARGET
  if (__builtin_cpu_supports("fma")) return labelRowsFmaHardware;
#endif
  return labelRowsFmaPortable;
}

/// Deterministic values in [-4, 4) (a private generator: ATen's random state stays untouched).
std::vector<float> probeValues(std::size_t count) {
  std::vector<float> values(count);
  std::uint32_t state = 0x9E3779B9u;
  for (float& v : values) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 8.0f - 4.0f;
  }
  return values;
}

/// Values of `candidate` that differ (bitwise) from at::upsample_bilinear2d on a 2-class map.
std::int64_t probeDifferences(const BilinearRounding& candidate, int height, int width, int outHeight,
                              int outWidth) {
  constexpr int kClasses = 2;
  std::vector<float> input = probeValues(static_cast<std::size_t>(kClasses * height * width));
  const at::Tensor logits = at::from_blob(input.data(), {1, kClasses, height, width}, at::kFloat);
  const at::Tensor reference = at::upsample_bilinear2d(logits, {outHeight, outWidth}, false).contiguous();
  const float* expected = reference.data_ptr<float>();
  const AxisWeights rows = axisWeights(height, outHeight, candidate);
  const AxisWeights columns = axisWeights(width, outWidth, candidate);
  const auto combine = [&](float t0, float w0, float t1, float w1) {
    return candidate.fmaCombine ? std::fma(t0, w0, t1 * w1) : t0 * w0 + t1 * w1;
  };
  std::int64_t differences = 0;
  for (int c = 0; c < kClasses; ++c) {
    const float* map = input.data() + static_cast<std::size_t>(c * height * width);
    for (int y = 0; y < outHeight; ++y) {
      const auto sy = static_cast<std::size_t>(y);
      const float* r0 = map + rows.index0[sy] * width;
      const float* r1 = map + rows.index1[sy] * width;
      for (int x = 0; x < outWidth; ++x) {
        const auto sx = static_cast<std::size_t>(x);
        const float top =
            combine(r0[columns.index0[sx]], columns.lambda0[sx], r0[columns.index1[sx]], columns.lambda1[sx]);
        const float bottom =
            combine(r1[columns.index0[sx]], columns.lambda0[sx], r1[columns.index1[sx]], columns.lambda1[sx]);
        const float value = combine(top, rows.lambda0[sy], bottom, rows.lambda1[sy]);
        const float want = expected[(c * outHeight + y) * outWidth + x];
        if (std::memcmp(&value, &want, sizeof value) != 0) ++differences;
      }
    }
  }
  return differences;
}

BilinearRounding probeRounding() {
  BilinearRounding best;
  std::int64_t fewest = std::numeric_limits<std::int64_t>::max();
  for (const bool doubleIndex : {true, false}) {
    for (const bool fmaCombine : {false, true}) {
      for (const bool fmaIndex : {false, true}) {
        const BilinearRounding candidate{doubleIndex, fmaIndex, fmaCombine};
        // Upsampling, downsampling, and one of each at once; every output over 128 rows + columns.
        const std::int64_t differences = probeDifferences(candidate, 9, 7, 121, 97) +
                                         probeDifferences(candidate, 200, 150, 70, 61) +
                                         probeDifferences(candidate, 13, 40, 97, 35);
        if (differences < fewest) {
          fewest = differences;
          best = candidate;
        }
        if (differences == 0) return best;
      }
    }
  }
  best.exact = false;
  return best;
}

}  // namespace

const BilinearRounding& atenBilinearRounding() {
  static const BilinearRounding rounding = probeRounding();
  return rounding;
}

bool fusedArgmaxMatchesAten(int height, int width, int outHeight, int outWidth) {
  if (!atenBilinearRounding().exact) return false;
  if (height == 1 && width == 1) return false;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  if (outHeight + outWidth <= 128) return false;
#else
  (void)outHeight, (void)outWidth;
#endif
  return true;
}

void upsampleArgmax(const float* logits, int classes, int height, int width, int outHeight, int outWidth,
                    std::uint8_t* labels, std::size_t labelStride, const BilinearRounding& rounding) {
  if (classes < 1 || classes > 256 || height < 1 || width < 1 || outHeight < 1 || outWidth < 1 ||
      labelStride < static_cast<std::size_t>(outWidth)) {
    throw std::invalid_argument(
        fmt::format("upsampleArgmax: bad sizes: {} classes of {}x{} to {}x{} (label rows {} bytes apart)",
                    classes, height, width, outHeight, outWidth, labelStride));
  }
  const AxisWeights rows = axisWeights(height, outHeight, rounding);
  const AxisWeights columns = axisWeights(width, outWidth, rounding);
  const Job job{logits, classes, height, width, outWidth, labels, labelStride, &rows, &columns};
  const RowFunction function = rowFunction(rounding);
  // At least 16 rows a task: each task starts by interpolating two input rows of every class.
  at::parallel_for(0, outHeight, 16,
                   [&](std::int64_t begin, std::int64_t end) { function(job, begin, end); });
}

}  // namespace sapiens::detail
