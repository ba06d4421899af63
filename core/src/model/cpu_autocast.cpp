#include "cpu_autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace sapiens::detail {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool cpuAutocastEnabled() {
  return at::autocast::is_autocast_enabled(at::kCPU);
}
void setCpuAutocast(bool enabled, c10::ScalarType dtype) {
  at::autocast::set_autocast_enabled(at::kCPU, enabled);
  at::autocast::set_autocast_dtype(at::kCPU, dtype);
}
c10::ScalarType cpuAutocastDtype() {
  return at::autocast::get_autocast_dtype(at::kCPU);
}
#else
bool cpuAutocastEnabled() {
  return at::autocast::is_cpu_enabled();
}
void setCpuAutocast(bool enabled, c10::ScalarType dtype) {
  at::autocast::set_cpu_enabled(enabled);
  at::autocast::set_autocast_cpu_dtype(dtype);
}
c10::ScalarType cpuAutocastDtype() {
  return at::autocast::get_autocast_cpu_dtype();
}
#endif

bool cpuAutocastToBf16() {
  return cpuAutocastEnabled() && cpuAutocastDtype() == c10::kBFloat16;
}

}  // namespace sapiens::detail
