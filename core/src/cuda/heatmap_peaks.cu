// (b) Peak (first maximum, NaN = maximum) and its value of every heatmap channel in one launch: one block
// per (item, channel) map, a strided scan per thread, then a reduction that keeps the lower index on ties.

#include "cuda/device_common.cuh"
#include "cuda/kernel_math.h"

#include <climits>
#include <cstdint>
#include <string>

namespace sapiens::cuda {
namespace {

constexpr int kThreads = 256;

struct Candidate {
  float value;
  int index;  // -1: none yet
};

/// The better of two candidates covering disjoint cells: the NaN or the larger value, the lower index on
/// a tie (both NaN included).
__device__ __forceinline__ Candidate better(Candidate a, Candidate b) {
  if (a.index < 0) return b;
  if (b.index < 0) return a;
  if (math::beats(b.value, a.value)) return b;
  if (math::beats(a.value, b.value)) return a;
  return b.index < a.index ? b : a;
}

template <typename T>
__global__ void heatmapPeaksKernel(const T* __restrict__ heatmaps, int plane,
                                   std::int32_t* __restrict__ indices, float* __restrict__ values) {
  __shared__ Candidate shared[kThreads];
  const T* map = heatmaps + static_cast<std::size_t>(blockIdx.x) * plane;
  Candidate mine{0.0f, -1};
  // Each thread visits its cells in increasing order: strictly better keeps its first maximum.
  for (std::int64_t i = threadIdx.x; i < plane; i += blockDim.x) {  // 64-bit: plane may be near INT_MAX
    const float v = detail::toFloat(map[i]);
    if (mine.index < 0 || math::beats(v, mine.value)) mine = Candidate{v, static_cast<int>(i)};
  }
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = better(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    indices[blockIdx.x] = shared[0].index;
    values[blockIdx.x] = shared[0].value;
  }
}

}  // namespace

void heatmapPeaks(const void* heatmaps, ElementType type, int batch, int channels, int height, int width,
                  std::int32_t* indices, float* values, void* stream) {
  const long long maps = static_cast<long long>(batch) * channels;
  const long long plane = static_cast<long long>(height) * width;
  if (batch < 1 || channels < 1 || height < 1 || width < 1 || maps > INT_MAX || plane > INT_MAX) {
    throw std::invalid_argument("heatmapPeaks: bad sizes: batch " + std::to_string(batch) + ", " +
                                std::to_string(channels) + " channels of " + std::to_string(height) + "x" +
                                std::to_string(width));
  }
  detail::dispatch(type, "heatmapPeaks", [&](auto tag) {
    using T = decltype(tag);
    heatmapPeaksKernel<T><<<static_cast<unsigned>(maps), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(heatmaps), static_cast<int>(plane), indices, values);
  });
  detail::checkLaunch("heatmapPeaks");
}

}  // namespace sapiens::cuda
