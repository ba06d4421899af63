// (a) Fused bilinear upsampling + argmax of segmentation logits straight to a uint8 label map: one thread
// per output pixel loops over the classes; the logits (1/4 resolution) stay in the caches, and neither
// the upsampled C x H x W map nor anything but the labels is written.

#include "cuda/device_common.cuh"
#include "cuda/kernel_math.h"

#include <cstdint>
#include <string>

namespace sapiens::cuda {
namespace {

template <typename T>
__global__ void upsampleArgmaxKernel(const T* __restrict__ logits, int classes, int height, int width,
                                     int outHeight, int outWidth, float scaleY, float scaleX,
                                     std::uint8_t* __restrict__ labels) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= outWidth) return;
  const int b = blockIdx.z;
  const math::Tap tx = math::bilinearTap(x, width, outWidth, scaleX);
  const std::size_t plane = static_cast<std::size_t>(height) * width;
  const T* item = logits + static_cast<std::size_t>(b) * classes * plane;
  for (int y = blockIdx.y; y < outHeight; y += gridDim.y) {
    const math::Tap ty = math::bilinearTap(y, height, outHeight, scaleY);
    const std::size_t row0 = static_cast<std::size_t>(ty.index0) * width;
    const std::size_t row1 = static_cast<std::size_t>(ty.index1) * width;
    float best = 0.0f;
    int label = 0;
    for (int c = 0; c < classes; ++c) {
      const T* map = item + c * plane;
      const float top = math::mix(tx.lambda0, detail::toFloat(map[row0 + tx.index0]), tx.lambda1,
                                  detail::toFloat(map[row0 + tx.index1]));
      const float bottom = math::mix(tx.lambda0, detail::toFloat(map[row1 + tx.index0]), tx.lambda1,
                                     detail::toFloat(map[row1 + tx.index1]));
      const float value = math::mix(ty.lambda0, top, ty.lambda1, bottom);
      if (c == 0 || math::beats(value, best)) {
        best = value;
        label = c;
      }
    }
    labels[(static_cast<std::size_t>(b) * outHeight + y) * outWidth + x] = static_cast<std::uint8_t>(label);
  }
}

}  // namespace

void upsampleArgmax(const void* logits, ElementType type, int batch, int classes, int height, int width,
                    int outHeight, int outWidth, std::uint8_t* labels, void* stream) {
  if (batch < 1 || batch > 65535 || classes < 1 || classes > 256 || height < 1 || width < 1 ||
      outHeight < 1 || outWidth < 1) {
    throw std::invalid_argument("upsampleArgmax: bad sizes: batch " + std::to_string(batch) + ", " +
                                std::to_string(classes) + " classes of " + std::to_string(height) + "x" +
                                std::to_string(width) + " to " + std::to_string(outHeight) + "x" +
                                std::to_string(outWidth));
  }
  constexpr int kThreads = 256;
  const dim3 grid((outWidth + kThreads - 1) / kThreads, outHeight < 65535 ? outHeight : 65535, batch);
  const float scaleY = static_cast<float>(height) / static_cast<float>(outHeight);
  const float scaleX = static_cast<float>(width) / static_cast<float>(outWidth);
  detail::dispatch(type, "upsampleArgmax", [&](auto tag) {
    using T = decltype(tag);
    upsampleArgmaxKernel<T><<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(logits), classes, height, width, outHeight, outWidth, scaleY, scaleX, labels);
  });
  detail::checkLaunch("upsampleArgmax");
}

}  // namespace sapiens::cuda
