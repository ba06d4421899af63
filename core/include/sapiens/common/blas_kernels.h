#pragma once
// Which OpenBLAS kernels run the matrix products. OPENBLAS_CORETYPE can pin them (some machines pin the
// AVX2 "Haswell" kernels everywhere); on a CPU with AVX-512 that halves the matrix-product rate (242 vs
// 439-468 GFLOP/s measured on a Zen 5, docs/PERFORMANCE.md), so `doctor` says so.

#include <string>
#include <string_view>

namespace sapiens::blas {

/// The kernel family OpenBLAS is running ("Haswell", "Cooperlake", ...); "" where the BLAS is not OpenBLAS.
std::string openBlasCore();

/// The kernel family to pin with OPENBLAS_CORETYPE where OpenBLAS does not know the CPU and falls back to
/// kernels older than it runs ("Prescott": SSE3, ~10x slower matrix products; Debian 12's OpenBLAS 0.3.21
/// does so on Intel's Emerald Rapids): "SkylakeX" with AVX-512, "Haswell" with AVX2 and FMA; "" where its
/// choice stands (a family with AVX2 or newer, not OpenBLAS, or a CPU without AVX2).
std::string coreTypeToPin(std::string_view core, bool cpuHasAvx2, bool cpuHasAvx512);

/// True where `core` is one of OpenBLAS's AVX2 kernel families ("Haswell", "Zen") and the CPU has
/// AVX-512, whose kernels ("SkylakeX", "Cooperlake") it could run instead.
bool slowerKernelsThanTheCpuRuns(std::string_view core, bool cpuHasAvx512);

/// "" where OpenBLAS runs the best kernels this CPU has; otherwise the sentence `doctor` and the studio's
/// log give, naming OPENBLAS_CORETYPE where it is set.
std::string slowKernelsWarning();

}  // namespace sapiens::blas
