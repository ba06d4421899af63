// (c) Pointmap (3 x H x W planes) + optional mask -> packed xyz vertices of the finite, unmasked pixels in
// pixel order. Three launches: count the kept points of each 256-pixel tile, scan the tile counts into
// offsets (one block), then write each tile's points at its offset (warp ballots order them in the tile).

#include "cuda/device_common.cuh"
#include "cuda/kernel_math.h"

#include <cstdint>
#include <string>

namespace sapiens::cuda {
namespace {

constexpr int kTile = 256;  // pixels per block; a multiple of 32
constexpr int kScanThreads = 1024;

template <typename T>
__device__ __forceinline__ bool loadPoint(const T* __restrict__ pointmap,
                                          const std::uint8_t* __restrict__ mask, long long pixels,
                                          long long p, float& x, float& y, float& z) {
  if (p >= pixels) return false;
  if (mask != nullptr && mask[p] == 0) return false;
  x = detail::toFloat(pointmap[p]);
  y = detail::toFloat(pointmap[pixels + p]);
  z = detail::toFloat(pointmap[2 * pixels + p]);
  return math::isFinite(x) && math::isFinite(y) && math::isFinite(z);
}

template <typename T>
__global__ void countTiles(const T* __restrict__ pointmap, const std::uint8_t* __restrict__ mask,
                           long long pixels, long long* __restrict__ tiles) {
  float x = 0.0f, y = 0.0f, z = 0.0f;
  const bool kept =
      loadPoint(pointmap, mask, pixels, static_cast<long long>(blockIdx.x) * kTile + threadIdx.x, x, y, z);
  const int count = __syncthreads_count(kept);
  if (threadIdx.x == 0) tiles[blockIdx.x] = count;
}

/// In place: tile counts -> exclusive offsets; *total = the sum. One block of kScanThreads threads, each
/// summing a contiguous run of tiles, then a scan of the runs' sums in shared memory.
__global__ void scanTiles(long long* __restrict__ tiles, long long count, std::int64_t* __restrict__ total) {
  __shared__ long long sums[kScanThreads];
  const int t = threadIdx.x;
  const long long per = (count + kScanThreads - 1) / kScanThreads;
  const long long begin = t * per < count ? t * per : count;
  const long long end = begin + per < count ? begin + per : count;
  long long sum = 0;
  for (long long i = begin; i < end; ++i) sum += tiles[i];
  sums[t] = sum;
  __syncthreads();
  for (int offset = 1; offset < kScanThreads; offset *= 2) {
    const long long add = t >= offset ? sums[t - offset] : 0;
    __syncthreads();
    sums[t] += add;
    __syncthreads();
  }
  long long running = t > 0 ? sums[t - 1] : 0;
  for (long long i = begin; i < end; ++i) {
    const long long c = tiles[i];
    tiles[i] = running;
    running += c;
  }
  if (t == kScanThreads - 1) *total = sums[t];
}

template <typename T>
__global__ void writeTiles(const T* __restrict__ pointmap, const std::uint8_t* __restrict__ mask,
                           long long pixels, const long long* __restrict__ offsets,
                           float* __restrict__ vertices) {
  __shared__ int warpCounts[kTile / 32];
  float x = 0.0f, y = 0.0f, z = 0.0f;
  const bool kept =
      loadPoint(pointmap, mask, pixels, static_cast<long long>(blockIdx.x) * kTile + threadIdx.x, x, y, z);
  const unsigned ballot = __ballot_sync(0xffffffffu, kept);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) warpCounts[warp] = __popc(ballot);
  __syncthreads();
  if (!kept) return;
  long long slot = offsets[blockIdx.x] + __popc(ballot & ((1u << lane) - 1u));
  for (int w = 0; w < warp; ++w) slot += warpCounts[w];
  vertices[3 * slot] = x;
  vertices[3 * slot + 1] = y;
  vertices[3 * slot + 2] = z;
}

long long tileCount(std::int64_t pixels) {
  return (pixels + kTile - 1) / kTile;
}

}  // namespace

std::size_t pointmapVerticesWorkspaceBytes(std::int64_t pixels) {
  return static_cast<std::size_t>(tileCount(pixels < 1 ? 1 : pixels)) * sizeof(long long);
}

void pointmapVertices(const void* pointmap, ElementType type, const std::uint8_t* mask, int height, int width,
                      float* vertices, std::int64_t* count, void* workspace, void* stream) {
  if (height < 1 || width < 1 || workspace == nullptr) {
    throw std::invalid_argument("pointmapVertices: bad pointmap 3x" + std::to_string(height) + "x" +
                                std::to_string(width) + (workspace == nullptr ? " (no workspace)" : ""));
  }
  const long long pixels = static_cast<long long>(height) * width;
  const long long tiles = tileCount(pixels);
  auto* offsets = static_cast<long long*>(workspace);
  const auto s = static_cast<cudaStream_t>(stream);
  detail::dispatch(type, "pointmapVertices", [&](auto tag) {
    using T = decltype(tag);
    const T* map = static_cast<const T*>(pointmap);
    countTiles<T><<<static_cast<unsigned>(tiles), kTile, 0, s>>>(map, mask, pixels, offsets);
    detail::checkLaunch("pointmapVertices (count)");
    scanTiles<<<1, kScanThreads, 0, s>>>(offsets, tiles, count);
    detail::checkLaunch("pointmapVertices (scan)");
    writeTiles<T><<<static_cast<unsigned>(tiles), kTile, 0, s>>>(map, mask, pixels, offsets, vertices);
    detail::checkLaunch("pointmapVertices (write)");
  });
}

}  // namespace sapiens::cuda
