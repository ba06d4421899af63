// CPU references of the CUDA kernels (kernels.h): the same float32 operations (kernel_math.h), one
// element at a time. Compiled by the ordinary compiler, always; the kernel tests compare against them.

#include "cuda/kernel_math.h"
#include "cuda/kernels.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace sapiens::cuda {
namespace {

float bfloat16ToFloat(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

float float16ToFloat(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x3FFu;
  std::uint32_t wide;
  if (exponent == 0x1Fu) {
    wide = sign | 0x7F800000u | (mantissa << 13);  // inf, NaN
  } else if (exponent != 0) {
    wide = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    wide = sign;
  } else {  // subnormal: normalise
    exponent = 113u;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    wide = sign | (exponent << 23) | ((mantissa & 0x3FFu) << 13);
  }
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// Element i of a tensor of `type`, as float.
float load(const void* data, ElementType type, std::size_t i) {
  switch (type) {
    case ElementType::Float32:
      return static_cast<const float*>(data)[i];
    case ElementType::BFloat16:
      return bfloat16ToFloat(static_cast<const std::uint16_t*>(data)[i]);
    case ElementType::Float16:
      return float16ToFloat(static_cast<const std::uint16_t*>(data)[i]);
  }
  throw std::invalid_argument("unknown element type");
}

}  // namespace

const char* elementTypeName(ElementType type) {
  switch (type) {
    case ElementType::Float32:
      return "float32";
    case ElementType::BFloat16:
      return "bfloat16";
    case ElementType::Float16:
      return "float16";
  }
  return "unknown";
}

void upsampleArgmaxReference(const void* logits, ElementType type, int batch, int classes, int height,
                             int width, int outHeight, int outWidth, std::uint8_t* labels) {
  if (batch < 1 || classes < 1 || classes > 256 || height < 1 || width < 1 || outHeight < 1 || outWidth < 1) {
    throw std::invalid_argument("upsampleArgmaxReference: bad sizes: " + std::to_string(classes) +
                                " classes of " + std::to_string(height) + "x" + std::to_string(width) +
                                " to " + std::to_string(outHeight) + "x" + std::to_string(outWidth));
  }
  const float scaleY = static_cast<float>(height) / static_cast<float>(outHeight);
  const float scaleX = static_cast<float>(width) / static_cast<float>(outWidth);
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  for (int b = 0; b < batch; ++b) {
    for (int y = 0; y < outHeight; ++y) {
      const math::Tap ty = math::bilinearTap(y, height, outHeight, scaleY);
      for (int x = 0; x < outWidth; ++x) {
        const math::Tap tx = math::bilinearTap(x, width, outWidth, scaleX);
        float best = 0.0f;
        int label = 0;
        for (int c = 0; c < classes; ++c) {
          const std::size_t map = (static_cast<std::size_t>(b) * static_cast<std::size_t>(classes) +
                                   static_cast<std::size_t>(c)) *
                                  plane;
          const std::size_t row0 =
              map + static_cast<std::size_t>(ty.index0) * static_cast<std::size_t>(width);
          const std::size_t row1 =
              map + static_cast<std::size_t>(ty.index1) * static_cast<std::size_t>(width);
          const auto i0 = static_cast<std::size_t>(tx.index0);
          const auto i1 = static_cast<std::size_t>(tx.index1);
          const float top =
              math::mix(tx.lambda0, load(logits, type, row0 + i0), tx.lambda1, load(logits, type, row0 + i1));
          const float bottom =
              math::mix(tx.lambda0, load(logits, type, row1 + i0), tx.lambda1, load(logits, type, row1 + i1));
          const float value = math::mix(ty.lambda0, top, ty.lambda1, bottom);
          if (c == 0 || math::beats(value, best)) {
            best = value;
            label = c;
          }
        }
        labels[(static_cast<std::size_t>(b) * static_cast<std::size_t>(outHeight) +
                static_cast<std::size_t>(y)) *
                   static_cast<std::size_t>(outWidth) +
               static_cast<std::size_t>(x)] = static_cast<std::uint8_t>(label);
      }
    }
  }
}

void heatmapPeaksReference(const void* heatmaps, ElementType type, int batch, int channels, int height,
                           int width, std::int32_t* indices, float* values) {
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  const std::size_t maps = static_cast<std::size_t>(batch) * static_cast<std::size_t>(channels);
  for (std::size_t m = 0; m < maps; ++m) {
    float best = load(heatmaps, type, m * plane);
    std::size_t index = 0;
    for (std::size_t i = 1; i < plane; ++i) {
      const float v = load(heatmaps, type, m * plane + i);
      if (math::beats(v, best)) {
        best = v;
        index = i;
      }
    }
    indices[m] = static_cast<std::int32_t>(index);
    values[m] = best;
  }
}

std::int64_t pointmapVerticesReference(const void* pointmap, ElementType type, const std::uint8_t* mask,
                                       int height, int width, float* vertices) {
  const std::size_t pixels = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  std::int64_t count = 0;
  for (std::size_t p = 0; p < pixels; ++p) {
    if (mask != nullptr && mask[p] == 0) continue;
    const float x = load(pointmap, type, p);
    const float y = load(pointmap, type, pixels + p);
    const float z = load(pointmap, type, 2 * pixels + p);
    if (!math::isFinite(x) || !math::isFinite(y) || !math::isFinite(z)) continue;
    float* out = vertices + 3 * count;
    out[0] = x;
    out[1] = y;
    out[2] = z;
    ++count;
  }
  return count;
}

}  // namespace sapiens::cuda
