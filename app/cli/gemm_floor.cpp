#include "gemm_floor.h"

#include "sapiens/model/linear_product.h"

#include <ATen/ATen.h>
#ifdef SAPIENS_HAVE_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <algorithm>
#include <chrono>

namespace sapiens::cli {

void synchronizeDevice(const c10::Device& device) {
#ifdef SAPIENS_HAVE_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#else
  (void)device;
#endif
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double medianSeconds(int repeats, const c10::Device& device, const std::function<void()>& fn) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    synchronizeDevice(device);
    const auto start = std::chrono::steady_clock::now();
    fn();
    synchronizeDevice(device);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(std::move(times));
}

GemmFloor::GemmFloor(GemmShape shape, const c10::Device& device, c10::ScalarType dtype)
    : shape_(shape), device_(device), dtype_(dtype) {
  const auto [a, w] = randomOperands();
  linearProduct(a, w);  // first-call set-up (BLAS threads, oneDNN primitives) is not a sample
}

std::pair<at::Tensor, at::Tensor> GemmFloor::randomOperands() const {
  const auto options = at::TensorOptions().dtype(dtype_).device(device_);
  return {at::randn({shape_.m, shape_.k}, options), at::randn({shape_.n, shape_.k}, options)};
}

void GemmFloor::sample() {
  const auto [a, w] = randomOperands();
  seconds_.push_back(medianSeconds(3, device_, [&a = a, &w = w] { linearProduct(a, w); }));
}

double GemmFloor::gflops() const {
  return 2.0 * static_cast<double>(shape_.m) * static_cast<double>(shape_.k) * static_cast<double>(shape_.n) /
         median(seconds_) / 1e9;
}

}  // namespace sapiens::cli
