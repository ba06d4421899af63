// The custom CUDA kernels (core/src/cuda/kernels.h) against their CPU references on random inputs:
// upsample + argmax labels (exact, or a near-tie: the two classes' upsampled values within 1e-5
// relative), heatmap peaks (exact indices and values) and the pointmap vertex buffer (exact count and
// bytes). Plain C++ and the CUDA runtime, no LibTorch, no Qt: it builds wherever nvcc is found.
// Exit codes: 0 every check passed, 1 a mismatch or a CUDA error, 77 no CUDA device (ctest: skipped).

#include "cuda/kernel_math.h"
#include "cuda/kernels.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using sapiens::cuda::ElementType;

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(error) + " (" +
                             cudaGetErrorString(error) + ")");
  }
}

/// Device memory holding a copy of `host` (or `bytes` uninitialised bytes).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    check(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc");
  }
  template <typename T>
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size() * sizeof(T)) {
    check(cudaMemcpy(data_, host.data(), bytes_, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  template <typename T>
  std::vector<T> download(std::size_t count) const {
    std::vector<T> host(count);
    check(cudaMemcpy(host.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost),
          "cudaMemcpy to the host");
    return host;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

std::uint32_t bitsOf(float v) {
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

float fromBits(std::uint32_t bits) {
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// float -> bfloat16 / float16 bits, round to nearest even (finite values and NaN/inf; float16
/// subnormals flushed, which the generated values never are).
std::uint16_t toBFloat16(float v) {
  const std::uint32_t bits = bitsOf(v);
  if (std::isnan(v)) return 0x7FC0;
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

std::uint16_t toFloat16(float v) {
  const std::uint32_t bits = bitsOf(v);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(v)) return 0x7E00;
  if (std::isinf(v)) return static_cast<std::uint16_t>(sign | 0x7C00u);
  const int exponent = static_cast<int>((bits >> 23) & 0xFFu) - 127 + 15;
  if (exponent <= 0) return sign;
  if (exponent >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
  std::uint32_t mantissa = bits & 0x7FFFFFu;
  std::uint32_t half = (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<std::uint16_t>(sign | half);
}

/// The values as a tensor of `type`: raw bytes, plus the values that type actually holds.
struct Typed {
  std::vector<std::uint8_t> bytes;
  std::vector<float> values;
};

float fromBFloat16(std::uint16_t b) {
  return fromBits(static_cast<std::uint32_t>(b) << 16);
}

float fromFloat16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1Fu) return fromBits(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) return fromBits(sign);  // zero (no subnormals are generated)
  return fromBits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

Typed typed(const std::vector<float>& values, ElementType type) {
  Typed t;
  t.values = values;
  if (type == ElementType::Float32) {
    t.bytes.resize(values.size() * 4);
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  std::vector<std::uint16_t> half(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    half[i] = type == ElementType::BFloat16 ? toBFloat16(values[i]) : toFloat16(values[i]);
  }
  t.bytes.resize(half.size() * 2);
  std::memcpy(t.bytes.data(), half.data(), t.bytes.size());
  // What the kernels read (generated values are normal numbers, zero, inf or NaN in both types).
  for (std::size_t i = 0; i < values.size(); ++i) {
    t.values[i] = type == ElementType::BFloat16 ? fromBFloat16(half[i]) : fromFloat16(half[i]);
  }
  return t;
}

std::mt19937 rng(20240611u);

/// Uniform values in [-4, 4); `coarse`: multiples of 1/32 (many exact ties, exact in every type).
std::vector<float> randomValues(std::size_t count, bool coarse) {
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  std::uniform_int_distribution<int> steps(-127, 127);
  std::vector<float> values(count);
  for (float& v : values) v = coarse ? static_cast<float>(steps(rng)) / 32.0f : uniform(rng);
  return values;
}

int failures = 0;

void report(bool ok, const std::string& line) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", line.c_str());
  if (!ok) ++failures;
}

// --- (a) --------------------------------------------------------------------------------------------

/// The upsampled value of class c at (b, y, x), as the reference computes it.
float upsampledValue(const std::vector<float>& logits, int classes, int height, int width, int outHeight,
                     int outWidth, int b, int c, int y, int x) {
  namespace math = sapiens::cuda::math;
  const math::Tap ty =
      math::bilinearTap(y, height, outHeight, static_cast<float>(height) / static_cast<float>(outHeight));
  const math::Tap tx =
      math::bilinearTap(x, width, outWidth, static_cast<float>(width) / static_cast<float>(outWidth));
  const float* map = logits.data() + (static_cast<std::size_t>(b) * classes + c) * height * width;
  const auto at = [&](int row, int column) { return map[static_cast<std::size_t>(row) * width + column]; };
  const float top = math::mix(tx.lambda0, at(ty.index0, tx.index0), tx.lambda1, at(ty.index0, tx.index1));
  const float bottom = math::mix(tx.lambda0, at(ty.index1, tx.index0), tx.lambda1, at(ty.index1, tx.index1));
  return math::mix(ty.lambda0, top, ty.lambda1, bottom);
}

void checkUpsampleArgmax(int batch, int classes, int height, int width, int outHeight, int outWidth,
                         ElementType type, bool coarse, double nanShare) {
  std::vector<float> values =
      randomValues(static_cast<std::size_t>(batch) * classes * height * width, coarse);
  std::bernoulli_distribution nan(nanShare);
  for (float& v : values) {
    if (nanShare > 0.0 && nan(rng)) v = std::numeric_limits<float>::quiet_NaN();
  }
  const Typed input = typed(values, type);
  const std::size_t pixels = static_cast<std::size_t>(batch) * outHeight * outWidth;
  std::vector<std::uint8_t> expected(pixels);
  sapiens::cuda::upsampleArgmaxReference(input.bytes.data(), type, batch, classes, height, width, outHeight,
                                         outWidth, expected.data());
  const DeviceBuffer logits(input.bytes);
  const DeviceBuffer labels(pixels);
  sapiens::cuda::upsampleArgmax(logits.as<void>(), type, batch, classes, height, width, outHeight, outWidth,
                                labels.as<std::uint8_t>(), nullptr);
  check(cudaDeviceSynchronize(), "upsampleArgmax");
  const std::vector<std::uint8_t> got = labels.download<std::uint8_t>(pixels);
  std::size_t differ = 0, nearTies = 0;
  for (std::size_t i = 0; i < pixels; ++i) {
    if (got[i] == expected[i]) continue;
    ++differ;
    const int b = static_cast<int>(i / (static_cast<std::size_t>(outHeight) * outWidth));
    const int y = static_cast<int>(i / outWidth % outHeight);
    const int x = static_cast<int>(i % outWidth);
    const float mine =
        upsampledValue(input.values, classes, height, width, outHeight, outWidth, b, got[i], y, x);
    const float theirs =
        upsampledValue(input.values, classes, height, width, outHeight, outWidth, b, expected[i], y, x);
    if (got[i] < classes && std::fabs(mine - theirs) <= 1e-5f * std::fabs(theirs)) ++nearTies;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "upsampleArgmax %s %dx%dx%dx%d -> %dx%d%s%s: %zu of %zu labels differ (%zu near-ties)",
                sapiens::cuda::elementTypeName(type), batch, classes, height, width, outHeight, outWidth,
                coarse ? " coarse" : "", nanShare > 0.0 ? " with NaN" : "", differ, pixels, nearTies);
  report(differ == nearTies, line);
}

// --- (b) --------------------------------------------------------------------------------------------

bool sameValue(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || bitsOf(a) == bitsOf(b);
}

void checkHeatmapPeaks(int batch, int channels, int height, int width, ElementType type) {
  const std::size_t plane = static_cast<std::size_t>(height) * width;
  std::vector<float> values = randomValues(static_cast<std::size_t>(batch) * channels * plane, false);
  // Special maps: all equal (index 0), the maximum twice (the first), NaN twice (the first NaN), -inf.
  const auto map = [&](int m) { return values.data() + static_cast<std::size_t>(m) * plane; };
  const int maps = batch * channels;
  if (maps > 4 && plane > 8) {
    std::fill(map(0), map(0) + plane, 0.25f);
    map(1)[plane - 1] = 9.0f;
    map(1)[plane / 2] = 9.0f;
    map(2)[plane / 3] = std::numeric_limits<float>::quiet_NaN();
    map(2)[plane / 4] = std::numeric_limits<float>::quiet_NaN();
    map(2)[0] = 100.0f;
    std::fill(map(3), map(3) + plane, -std::numeric_limits<float>::infinity());
    map(4)[plane - 1] = std::numeric_limits<float>::infinity();
  }
  const Typed input = typed(values, type);
  std::vector<std::int32_t> expectedIndex(static_cast<std::size_t>(maps));
  std::vector<float> expectedValue(static_cast<std::size_t>(maps));
  sapiens::cuda::heatmapPeaksReference(input.bytes.data(), type, batch, channels, height, width,
                                       expectedIndex.data(), expectedValue.data());
  const DeviceBuffer heatmaps(input.bytes);
  const DeviceBuffer indices(static_cast<std::size_t>(maps) * sizeof(std::int32_t));
  const DeviceBuffer peaks(static_cast<std::size_t>(maps) * sizeof(float));
  sapiens::cuda::heatmapPeaks(heatmaps.as<void>(), type, batch, channels, height, width,
                              indices.as<std::int32_t>(), peaks.as<float>(), nullptr);
  check(cudaDeviceSynchronize(), "heatmapPeaks");
  const auto gotIndex = indices.download<std::int32_t>(static_cast<std::size_t>(maps));
  const auto gotValue = peaks.download<float>(static_cast<std::size_t>(maps));
  int differ = 0;
  for (std::size_t m = 0; m < gotIndex.size(); ++m) {
    if (gotIndex[m] != expectedIndex[m] || !sameValue(gotValue[m], expectedValue[m])) ++differ;
  }
  bool specials = true;
  if (maps > 4 && plane > 8) {
    specials = expectedIndex[0] == 0 && expectedIndex[1] == static_cast<std::int32_t>(plane / 2) &&
               expectedIndex[2] == static_cast<std::int32_t>(plane / 4) && std::isnan(expectedValue[2]) &&
               expectedIndex[3] == 0 && expectedIndex[4] == static_cast<std::int32_t>(plane - 1);
  }
  char line[256];
  std::snprintf(line, sizeof line, "heatmapPeaks %s %dx%dx%dx%d: %d of %d maps differ%s",
                sapiens::cuda::elementTypeName(type), batch, channels, height, width, differ, maps,
                specials ? "" : " (the reference broke numpy's rules on the special maps)");
  report(differ == 0 && specials, line);
}

// --- (c) --------------------------------------------------------------------------------------------

void checkPointmapVertices(int height, int width, ElementType type, bool withMask, double invalidShare,
                           double maskedShare) {
  const std::size_t pixels = static_cast<std::size_t>(height) * width;
  std::vector<float> values = randomValues(3 * pixels, false);
  std::bernoulli_distribution invalid(invalidShare);
  std::uniform_int_distribution<int> which(0, 5);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (std::size_t p = 0; p < pixels; ++p) {
    if (invalid(rng))
      values[static_cast<std::size_t>(which(rng) % 3) * pixels + p] = specials[which(rng) % 3];
  }
  std::vector<std::uint8_t> mask(pixels);
  std::bernoulli_distribution masked(maskedShare);
  for (auto& m : mask) m = masked(rng) ? 0 : static_cast<std::uint8_t>(1 + which(rng));
  const Typed input = typed(values, type);
  std::vector<float> expected(3 * pixels);
  const std::int64_t expectedCount = sapiens::cuda::pointmapVerticesReference(
      input.bytes.data(), type, withMask ? mask.data() : nullptr, height, width, expected.data());
  const DeviceBuffer pointmap(input.bytes);
  const DeviceBuffer deviceMask(mask);
  const DeviceBuffer vertices(3 * pixels * sizeof(float));
  const DeviceBuffer count(sizeof(std::int64_t));
  const DeviceBuffer workspace(
      sapiens::cuda::pointmapVerticesWorkspaceBytes(static_cast<std::int64_t>(pixels)));
  sapiens::cuda::pointmapVertices(
      pointmap.as<void>(), type, withMask ? deviceMask.as<std::uint8_t>() : nullptr, height, width,
      vertices.as<float>(), count.as<std::int64_t>(), workspace.as<void>(), nullptr);
  check(cudaDeviceSynchronize(), "pointmapVertices");
  const std::int64_t gotCount = count.download<std::int64_t>(1)[0];
  bool same = gotCount == expectedCount;
  if (same && gotCount > 0) {
    const auto got = vertices.download<float>(3 * static_cast<std::size_t>(gotCount));
    same = std::memcmp(got.data(), expected.data(), got.size() * sizeof(float)) == 0;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "pointmapVertices %s 3x%dx%d%s: %lld of %zu points kept, reference %lld, %s",
                sapiens::cuda::elementTypeName(type), height, width, withMask ? " masked" : "",
                static_cast<long long>(gotCount), pixels, static_cast<long long>(expectedCount),
                same ? "identical" : "DIFFERENT");
  report(same, line);
}

}  // namespace

int main() {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    std::printf("test_cuda_kernels: SKIP: no CUDA device (cudaGetDeviceCount: %s)\n",
                error != cudaSuccess ? cudaGetErrorString(error) : "0 devices");
    return 77;
  }
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  std::printf("test_cuda_kernels: %s (sm_%d%d)\n", properties.name, properties.major, properties.minor);
  try {
    using T = ElementType;
    // Seg: the model's 1/4 maps to a 1080p and a 4K picture, odd sizes, downsampling, equal sizes, one
    // class, 256 classes, a 1 x 1 map, a batch; float32, bfloat16, float16; NaN logits.
    checkUpsampleArgmax(1, 29, 256, 192, 1080, 1920, T::Float32, false, 0.0);
    checkUpsampleArgmax(1, 29, 256, 192, 2160, 3840, T::BFloat16, false, 0.0);
    checkUpsampleArgmax(2, 29, 64, 48, 270, 480, T::Float16, true, 0.0);
    checkUpsampleArgmax(1, 7, 37, 23, 101, 59, T::Float32, true, 0.0);
    checkUpsampleArgmax(1, 5, 100, 80, 33, 47, T::Float32, false, 0.0);
    checkUpsampleArgmax(1, 3, 16, 16, 16, 16, T::BFloat16, true, 0.0);
    checkUpsampleArgmax(3, 1, 5, 7, 9, 11, T::Float32, false, 0.0);
    checkUpsampleArgmax(1, 256, 8, 6, 31, 17, T::Float32, false, 0.0);
    checkUpsampleArgmax(1, 4, 1, 1, 5, 7, T::Float32, false, 0.0);
    checkUpsampleArgmax(1, 29, 40, 30, 160, 120, T::Float32, false, 0.02);
    // Pose: 308 keypoints at 1/4 of 1024 x 768, a batch of 17-keypoint maps, a single cell.
    checkHeatmapPeaks(1, 308, 256, 192, T::Float32);
    checkHeatmapPeaks(4, 17, 64, 48, T::BFloat16);
    checkHeatmapPeaks(2, 3, 1, 1, T::Float32);
    checkHeatmapPeaks(1, 6, 999, 7, T::Float32);
    // Pointmap: 1080p with NaN/inf coordinates and a mask, unmasked bfloat16, all masked, one pixel.
    checkPointmapVertices(1080, 1920, T::Float32, true, 0.05, 0.3);
    checkPointmapVertices(1024, 768, T::BFloat16, false, 0.01, 0.0);
    checkPointmapVertices(37, 51, T::Float16, true, 0.1, 1.0);
    checkPointmapVertices(1, 1, T::Float32, false, 0.0, 0.0);
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
    ++failures;
  }
  std::printf("test_cuda_kernels: %s (%d failed)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
