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
    : shape_(shape), device_(device) {
  const auto options = at::TensorOptions().dtype(dtype).device(device);
  a_ = at::randn({shape_.m, shape_.k}, options);
  w_ = at::randn({shape_.n, shape_.k}, options);
  out_ = at::empty({shape_.m, shape_.n}, options);
  linearProductInto(a_, w_, out_);  // first-call set-up (BLAS threads, oneDNN primitives) is not a sample
}

void GemmFloor::sample() {
  seconds_.push_back(medianSeconds(3, device_, [this] { linearProductInto(a_, w_, out_); }));
}

double GemmFloor::gflops() const {
  return 2.0 * static_cast<double>(shape_.m) * static_cast<double>(shape_.k) * static_cast<double>(shape_.n) /
         median(seconds_) / 1e9;
}

}  // namespace sapiens::cli
