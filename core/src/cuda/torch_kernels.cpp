#include "cuda/torch_kernels.h"

#include "cuda/kernels.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace sapiens::cuda {
namespace {

std::string shapeText(const at::Tensor& t) {
  return fmt::format("({})", fmt::join(t.sizes(), ", "));
}

ElementType elementType(const at::Tensor& t, const char* what) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return ElementType::Float32;
    case at::kBFloat16:
      return ElementType::BFloat16;
    case at::kHalf:
      return ElementType::Float16;
    default:
      throw std::invalid_argument(fmt::format("{}: expected float32, bfloat16 or float16, got {}", what,
                                              c10::toString(t.scalar_type())));
  }
}

void requireCuda(const at::Tensor& t, const char* what) {
  if (!t.defined() || !t.is_cuda()) {
    throw std::invalid_argument(fmt::format("{}: expected a CUDA tensor, got {}", what,
                                            t.defined() ? t.device().str() : std::string("none")));
  }
}

int checkedInt(std::int64_t value, const char* what, const char* name) {
  if (value < 1 || value > std::numeric_limits<int>::max()) {
    throw std::invalid_argument(fmt::format("{}: {} {} out of range", what, name, value));
  }
  return static_cast<int>(value);
}

}  // namespace

at::Tensor upsampleArgmaxLabels(const at::Tensor& logits, std::int64_t height, std::int64_t width) {
  constexpr const char* what = "upsampleArgmaxLabels";
  requireCuda(logits, what);
  if (logits.dim() != 4 || logits.size(1) > 256) {
    throw std::invalid_argument(
        fmt::format("{}: expected (B, C <= 256, h, w) logits, got {}", what, shapeText(logits)));
  }
  const c10::cuda::CUDAGuard guard(logits.device());
  const at::Tensor input = logits.contiguous();
  at::Tensor labels = at::empty({logits.size(0), height, width}, logits.options().dtype(at::kByte));
  upsampleArgmax(input.data_ptr(), elementType(input, what), checkedInt(input.size(0), what, "batch"),
                 checkedInt(input.size(1), what, "classes"), checkedInt(input.size(2), what, "height"),
                 checkedInt(input.size(3), what, "width"), checkedInt(height, what, "output height"),
                 checkedInt(width, what, "output width"), labels.data_ptr<std::uint8_t>(),
                 at::cuda::getCurrentCUDAStream().stream());
  return labels.to(at::kCPU);
}

std::pair<at::Tensor, at::Tensor> heatmapPeaks(const at::Tensor& heatmaps) {
  constexpr const char* what = "heatmapPeaks";
  requireCuda(heatmaps, what);
  if (heatmaps.dim() != 4) {
    throw std::invalid_argument(
        fmt::format("{}: expected (B, K, h, w) heatmaps, got {}", what, shapeText(heatmaps)));
  }
  const c10::cuda::CUDAGuard guard(heatmaps.device());
  const at::Tensor input = heatmaps.contiguous();
  const auto options = input.options();
  at::Tensor indices = at::empty({input.size(0), input.size(1)}, options.dtype(at::kInt));
  at::Tensor values = at::empty({input.size(0), input.size(1)}, options.dtype(at::kFloat));
  cuda::heatmapPeaks(input.data_ptr(), elementType(input, what), checkedInt(input.size(0), what, "batch"),
                     checkedInt(input.size(1), what, "channels"), checkedInt(input.size(2), what, "height"),
                     checkedInt(input.size(3), what, "width"), indices.data_ptr<std::int32_t>(),
                     values.data_ptr<float>(), at::cuda::getCurrentCUDAStream().stream());
  return {indices, values};
}

at::Tensor pointmapVertices(const at::Tensor& pointmap, const at::Tensor& mask) {
  constexpr const char* what = "pointmapVertices";
  requireCuda(pointmap, what);
  if (pointmap.dim() != 3 || pointmap.size(0) != 3) {
    throw std::invalid_argument(
        fmt::format("{}: expected a (3, H, W) pointmap, got {}", what, shapeText(pointmap)));
  }
  const c10::cuda::CUDAGuard guard(pointmap.device());
  const at::Tensor input = pointmap.contiguous();
  const int height = checkedInt(input.size(1), what, "height");
  const int width = checkedInt(input.size(2), what, "width");
  at::Tensor maskBytes;
  if (mask.defined()) {
    if (mask.dim() != 2 || mask.size(0) != height || mask.size(1) != width) {
      throw std::invalid_argument(fmt::format("{}: the mask {} does not match the pointmap {}", what,
                                              shapeText(mask), shapeText(pointmap)));
    }
    maskBytes = mask.to(input.device(), at::kByte).contiguous();
  }
  const std::int64_t pixels = static_cast<std::int64_t>(height) * width;
  const auto options = input.options();
  at::Tensor vertices = at::empty({pixels, 3}, options.dtype(at::kFloat));
  at::Tensor count = at::empty({1}, options.dtype(at::kLong));
  at::Tensor workspace = at::empty({static_cast<std::int64_t>(pointmapVerticesWorkspaceBytes(pixels))},
                                   options.dtype(at::kByte));
  cuda::pointmapVertices(input.data_ptr(), elementType(input, what),
                         maskBytes.defined() ? maskBytes.data_ptr<std::uint8_t>() : nullptr, height, width,
                         vertices.data_ptr<float>(), count.data_ptr<std::int64_t>(), workspace.data_ptr(),
                         at::cuda::getCurrentCUDAStream().stream());
  const std::int64_t kept = count.item<std::int64_t>();
  return vertices.narrow(0, 0, kept).to(at::kCPU);
}

}  // namespace sapiens::cuda
