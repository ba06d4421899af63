#pragma once
// The environment switches that send one of our CPU kernels back to LibTorch's path, for comparison
// (SAPIENS_ONEDNN_MATMUL, SAPIENS_AMX_ATTENTION, SAPIENS_ONEDNN_DECONV, SAPIENS_FUSED_INSTANCE_NORM).

namespace sapiens::detail {

/// Whether the environment variable `name` is set to "0" or "off".
bool switchedOffByEnvironment(const char* name);

}  // namespace sapiens::detail
