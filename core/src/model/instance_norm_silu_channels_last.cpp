#include "instance_norm_silu_channels_last.h"

#include "norm_silu_lanes.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace sapiens::detail {

namespace {

using namespace norm_silu;

// Pixels per parallel task, and per inner chunk: each float lane sums at most a chunk's pixels before its
// total moves into a double (the planar kernel's 4096 elements over 16 lanes), and a chunk's rows stay in
// the core's cache while each group of channels reads them.
constexpr int64_t kPixelsPerTask = 8192;
constexpr int64_t kPixelsPerChunk = 256;
// Channels per group: four vectors, their sums and per-channel constants held in registers.
constexpr int kVectors = 4;
constexpr int64_t kGroupChannels = 16 * kVectors;

/// A channels-last tensor's extent: `pixels` rows of `channels` values for each of `batch` samples.
struct Extent {
  int64_t batch, channels, pixels;

  int64_t blocks() const { return (pixels + kPixelsPerTask - 1) / kPixelsPerTask; }
  int64_t tasks() const { return batch * blocks(); }
  int64_t sampleSize() const { return pixels * channels; }
};

Extent extentOf(const at::Tensor& x) {
  return {x.size(0), x.size(1), x.size(2) * x.size(3)};
}

/// Channels [first, first + 64) of a row of `channels`: each vector's lanes (none past the row's end).
struct ChannelGroup {
  int64_t first;
  int vectors = 0;  // those with lanes in the row
  __mmask16 mask[kVectors];

  ChannelGroup(int64_t firstChannel, int64_t channels) : first(firstChannel) {
    for (int v = 0; v < kVectors; ++v) {
      const int64_t remaining = channels - first - 16 * v;
      mask[v] = remaining > 0 ? tailMask16(remaining) : __mmask16(0);
      if (remaining > 0) vectors = v + 1;
    }
  }

  /// Vector v of a per-channel float array.
  SAPIENS_AVX512 __m512 perChannel(const float* values, int v) const {
    return _mm512_maskz_loadu_ps(mask[v], values + first + 16 * v);
  }

  /// Adds vector v's lanes into a per-channel double array.
  SAPIENS_AVX512 void addInto(double* totals, int v, __m512 lanes) const {
    alignas(64) float spill[16];
    _mm512_store_ps(spill, lanes);
    for (int lane = 0; lane < 16 && (mask[v] >> lane & 1); ++lane)
      totals[first + 16 * v + lane] += spill[lane];
  }
};

/// Per-channel sums over a chunk of one sample's pixels: x - shift and its square (the statistics).
template <int V, typename T>
SAPIENS_AVX512 void sumShiftedSquares(const T* x, int64_t begin, int64_t end, int64_t channels,
                                      const ChannelGroup& g, const float* shift, double* sum,
                                      double* squares) {
  __m512 offset[kVectors], s[kVectors], q[kVectors];
  for (int v = 0; v < V; ++v) {
    offset[v] = g.perChannel(shift, v);
    s[v] = q[v] = _mm512_setzero_ps();
  }
  for (int64_t pixel = begin; pixel < end; ++pixel) {
    const T* row = x + pixel * channels + g.first;
    for (int v = 0; v < V; ++v) {
      prefetchAhead(row + 16 * v);
      const __m512 d = _mm512_maskz_sub_ps(g.mask[v], load(row + 16 * v, g.mask[v]), offset[v]);
      s[v] = _mm512_add_ps(s[v], d);
      q[v] = _mm512_fmadd_ps(d, d, q[v]);
    }
  }
  for (int v = 0; v < V; ++v) {
    g.addInto(sum, v, s[v]);
    g.addInto(squares, v, q[v]);
  }
}

/// One sample's per-channel constants: the statistics, and in the backward pass the gradient's means.
struct SampleConstants {
  const float *mean, *scale, *meanGradient = nullptr, *meanGradientZ = nullptr;
};

/// A group's per-channel mean and inverse standard deviation, in registers: z = (x - mean) inverseStd.
template <int V>
struct Normaliser {
  __m512 mean[V], scale[V];

  SAPIENS_AVX512 Normaliser(const ChannelGroup& g, const SampleConstants& k) {
    for (int v = 0; v < V; ++v) {
      mean[v] = g.perChannel(k.mean, v);
      scale[v] = g.perChannel(k.scale, v);
    }
  }

  template <typename T>
  SAPIENS_AVX512 __m512 operator()(const T* p, int v, __mmask16 mask) const {
    return _mm512_mul_ps(_mm512_sub_ps(load(p, mask), mean[v]), scale[v]);
  }
};

/// Per-channel sums over a chunk of the backward pass's d (the gradient at the norm's output) and d z.
template <int V, typename T>
SAPIENS_AVX512 void sumGradientTerms(const T* x, const T* gy, int64_t begin, int64_t end, int64_t channels,
                                     const ChannelGroup& g, const SampleConstants& k, double* sumD,
                                     double* sumDz) {
  const Normaliser<V> normalised(g, k);
  __m512 a[kVectors], b[kVectors];
  for (int v = 0; v < V; ++v) a[v] = b[v] = _mm512_setzero_ps();
  for (int64_t pixel = begin; pixel < end; ++pixel) {
    const int64_t at = pixel * channels + g.first;
    for (int v = 0; v < V; ++v) {
      prefetchAhead(x + at + 16 * v);
      prefetchAhead(gy + at + 16 * v);
      const __m512 z = normalised(x + at + 16 * v, v, g.mask[v]);
      const __m512 d = _mm512_maskz_mov_ps(g.mask[v], siluGradient(z, load(gy + at + 16 * v, g.mask[v])));
      a[v] = _mm512_add_ps(a[v], d);
      b[v] = _mm512_fmadd_ps(d, z, b[v]);
    }
  }
  for (int v = 0; v < V; ++v) {
    g.addInto(sumD, v, a[v]);
    g.addInto(sumDz, v, b[v]);
  }
}

template <int V, typename T>
SAPIENS_AVX512 void activateChunk(const T* x, T* y, int64_t begin, int64_t end, int64_t channels,
                                  const ChannelGroup& g, const SampleConstants& k) {
  const Normaliser<V> normalised(g, k);
  for (int64_t pixel = begin; pixel < end; ++pixel) {
    const int64_t at = pixel * channels + g.first;
    for (int v = 0; v < V; ++v) {
      prefetchAhead(x + at + 16 * v);
      const __m512 z = normalised(x + at + 16 * v, v, g.mask[v]);
      storeOnce(y + at + 16 * v, g.mask[v], _mm512_mul_ps(z, sigmoid(z)));
    }
  }
}

// dx = inverseStd (d - mean(d) - z mean(d z)).
template <int V, typename T>
SAPIENS_AVX512 void gradientChunk(const T* x, const T* gy, T* gx, int64_t begin, int64_t end,
                                  int64_t channels, const ChannelGroup& g, const SampleConstants& k) {
  const Normaliser<V> normalised(g, k);
  __m512 meanD[kVectors], meanDz[kVectors];
  for (int v = 0; v < V; ++v) {
    meanD[v] = g.perChannel(k.meanGradient, v);
    meanDz[v] = g.perChannel(k.meanGradientZ, v);
  }
  for (int64_t pixel = begin; pixel < end; ++pixel) {
    const int64_t at = pixel * channels + g.first;
    for (int v = 0; v < V; ++v) {
      prefetchAhead(x + at + 16 * v);
      prefetchAhead(gy + at + 16 * v);
      const __m512 z = normalised(x + at + 16 * v, v, g.mask[v]);
      const __m512 d = siluGradient(z, load(gy + at + 16 * v, g.mask[v]));
      storeOnce(
          gx + at + 16 * v, g.mask[v],
          _mm512_mul_ps(normalised.scale[v], _mm512_fnmadd_ps(z, meanDz[v], _mm512_sub_ps(d, meanD[v]))));
    }
  }
}

/// Runs `chunk(task, sample, begin, end, group, vectors)` over every sample's pixels, in chunks and groups of
/// channels, in parallel over blocks of pixels (`vectors`: withVectorCount's constant).
template <typename Chunk>
void forEachChunk(const Extent& e, const Chunk& chunk) {
  const int64_t blocks = e.blocks();
  at::parallel_for(0, e.tasks(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t sample = task / blocks, first = (task % blocks) * kPixelsPerTask;
      const int64_t last = std::min(e.pixels, first + kPixelsPerTask);
      for (int64_t start = first; start < last; start += kPixelsPerChunk) {
        const int64_t stop = std::min(last, start + kPixelsPerChunk);
        for (int64_t c = 0; c < e.channels; c += kGroupChannels) {
          const ChannelGroup g(c, e.channels);
          // Only the group's vectors with lanes: a 16-channel head would otherwise take the sigmoid of three
          // empty vectors per pixel.
          withVectorCount<kVectors>(g.vectors,
                                    [&](auto vectors) { chunk(task, sample, start, stop, g, vectors); });
        }
      }
    }
    finishStreamingStores();
  });
}

/// Per-sample, per-channel pairs of sums, from each task's partial sums: `sums(sample, begin, end, group,
/// vectors, first, second)` adds a chunk's into `first` and `second` (per-channel arrays). The result holds,
/// for each sample, its channels' first sums then their second sums.
template <typename Sums>
std::vector<double> sumsPerPlane(const Extent& e, const Sums& sums) {
  const int64_t width = 2 * e.channels;
  std::vector<double> partial(static_cast<std::size_t>(e.tasks() * width), 0.0);
  forEachChunk(
      e, [&](int64_t task, int64_t sample, int64_t begin, int64_t end, const ChannelGroup& g, auto vectors) {
        double* out = partial.data() + task * width;
        sums(sample, begin, end, g, vectors, out, out + e.channels);
      });
  std::vector<double> total(static_cast<std::size_t>(e.batch * width), 0.0);
  for (int64_t task = 0; task < e.tasks(); ++task) {
    double* into = total.data() + (task / e.blocks()) * width;
    for (int64_t i = 0; i < width; ++i) into[i] += partial[static_cast<std::size_t>(task * width + i)];
  }
  return total;
}

/// Each plane's statistics as per-channel float arrays, batch x channels.
struct PlaneArrays {
  std::vector<float> mean, scale;

  explicit PlaneArrays(const at::Tensor& stats) {
    const auto* planes = reinterpret_cast<const PlaneStats*>(stats.data_ptr<float>());
    for (int64_t i = 0; i < stats.size(0); ++i) {
      mean.push_back(planes[i].mean);
      scale.push_back(planes[i].inverseStd);
    }
  }

  SampleConstants of(int64_t sample, int64_t channels) const {
    return {mean.data() + sample * channels, scale.data() + sample * channels};
  }
};

template <typename T>
void computeStats(const T* x, const Extent& e, double eps, PlaneStats* planes) {
  std::vector<float> shift;  // each plane's first element
  for (int64_t s = 0; s < e.batch; ++s)
    for (int64_t c = 0; c < e.channels; ++c) shift.push_back(static_cast<float>(x[s * e.sampleSize() + c]));
  const std::vector<double> sums =
      sumsPerPlane(e, [&](int64_t s, int64_t begin, int64_t end, const ChannelGroup& g, auto vectors,
                          double* sum, double* squares) {
        sumShiftedSquares<decltype(vectors)::value>(x + s * e.sampleSize(), begin, end, e.channels, g,
                                                    shift.data() + s * e.channels, sum, squares);
      });
  for (int64_t s = 0; s < e.batch; ++s) {
    const double* sampleSums = sums.data() + 2 * s * e.channels;
    for (int64_t c = 0; c < e.channels; ++c) {
      const int64_t plane = s * e.channels + c;
      planes[plane] = statsFromShiftedSums(shift[static_cast<std::size_t>(plane)], sampleSums[c],
                                           sampleSums[e.channels + c], e.pixels, eps);
    }
  }
}

/// The backward pass's per-channel means of d and d z, batch x channels each.
template <typename T>
std::vector<float> gradientMeans(const T* x, const T* gy, const Extent& e, const PlaneArrays& stats) {
  const std::vector<double> sums =
      sumsPerPlane(e, [&](int64_t s, int64_t begin, int64_t end, const ChannelGroup& g, auto vectors,
                          double* sumD, double* sumDz) {
        const int64_t offset = s * e.sampleSize();
        sumGradientTerms<decltype(vectors)::value>(x + offset, gy + offset, begin, end, e.channels, g,
                                                   stats.of(s, e.channels), sumD, sumDz);
      });
  std::vector<float> means(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i)
    means[i] = static_cast<float>(sums[i] / static_cast<double>(e.pixels));
  return means;
}

}  // namespace

at::Tensor channelsLastNormSiluForward(const at::Tensor& x, double eps, at::Tensor& stats) {
  const Extent e = extentOf(x);
  at::Tensor y = at::empty_like(x, at::MemoryFormat::ChannelsLast);
  stats = at::empty({e.batch * e.channels, 2}, x.options().dtype(at::kFloat));
  forEachDtype(x, [&](auto* in) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    computeStats(in, e, eps, reinterpret_cast<PlaneStats*>(stats.data_ptr<float>()));
    const PlaneArrays planes(stats);
    T* out = y.data_ptr<T>();
    forEachChunk(e, [&](int64_t, int64_t s, int64_t begin, int64_t end, const ChannelGroup& g, auto vectors) {
      const int64_t offset = s * e.sampleSize();
      activateChunk<decltype(vectors)::value>(in + offset, out + offset, begin, end, e.channels, g,
                                              planes.of(s, e.channels));
    });
  });
  return y;
}

at::Tensor channelsLastNormSiluBackward(const at::Tensor& x, const at::Tensor& stats,
                                        const at::Tensor& gradOutput) {
  const Extent e = extentOf(x);
  const at::Tensor gy = gradOutput.to(x.scalar_type()).contiguous(at::MemoryFormat::ChannelsLast);
  at::Tensor gx = at::empty_like(x, at::MemoryFormat::ChannelsLast);
  const PlaneArrays planes(stats);
  forEachDtype(x, [&](auto* in) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    const T* g = gy.data_ptr<T>();
    const std::vector<float> means = gradientMeans(in, g, e, planes);
    T* out = gx.data_ptr<T>();
    forEachChunk(
        e, [&](int64_t, int64_t s, int64_t begin, int64_t end, const ChannelGroup& group, auto vectors) {
          const int64_t offset = s * e.sampleSize();
          SampleConstants k = planes.of(s, e.channels);
          k.meanGradient = means.data() + 2 * s * e.channels;
          k.meanGradientZ = k.meanGradient + e.channels;
          gradientChunk<decltype(vectors)::value>(in + offset, g + offset, out + offset, begin, end,
                                                  e.channels, group, k);
        });
  });
  return gx;
}

}  // namespace sapiens::detail
