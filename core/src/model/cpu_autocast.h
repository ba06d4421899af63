#pragma once
// LibTorch's CPU autocast switches, the same calls for LibTorch 1.13 and 2.x (2.4 replaced the per-device
// switches by ones taking the device type).

#include <c10/core/ScalarType.h>

namespace sapiens::detail {

bool cpuAutocastEnabled();
void setCpuAutocast(bool enabled, c10::ScalarType dtype);
c10::ScalarType cpuAutocastDtype();
/// Whether this thread is inside a CPU autocast region to bf16 (a MixedPrecisionScope).
bool cpuAutocastToBf16();

}  // namespace sapiens::detail
