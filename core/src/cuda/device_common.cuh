#pragma once
// Device helpers shared by the kernels' .cu files (nvcc only).

#include "cuda/kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace sapiens::cuda::detail {

__device__ __forceinline__ float toFloat(float v) {
  return v;
}
__device__ __forceinline__ float toFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
__device__ __forceinline__ float toFloat(__half v) {
  return __half2float(v);
}

/// Throws with the kernel's name and CUDA's message when the launch just made failed.
inline void checkLaunch(const char* kernel) {
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    throw std::runtime_error(std::string(kernel) + ": CUDA launch failed: " + cudaGetErrorName(error) + " (" +
                             cudaGetErrorString(error) + ")");
  }
}

/// Calls f(T{}) with T the device type of `type`.
template <typename F>
void dispatch(ElementType type, const char* kernel, F&& f) {
  switch (type) {
    case ElementType::Float32:
      f(float{});
      return;
    case ElementType::BFloat16:
      f(__nv_bfloat16{});
      return;
    case ElementType::Float16:
      f(__half{});
      return;
  }
  throw std::invalid_argument(std::string(kernel) + ": unknown element type");
}

}  // namespace sapiens::cuda::detail
