#include "sapiens/common/blas_kernels.h"

#include "sapiens/common/cpu_features.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace sapiens::blas {

namespace {

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string openBlasCore() {
  // Resolved at run time: the BLAS is whichever library the loader picked for LibTorch.
  using CoreName = char* (*)();
  auto coreName = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = coreName ? coreName() : nullptr;
  return name ? std::string(name) : std::string();
}

std::string slowKernelsWarning() {
  const std::string core = openBlasCore();
  if (!slowerKernelsThanTheCpuRuns(core, cpu::hasAvx512())) return {};
  const char* pinned = std::getenv("OPENBLAS_CORETYPE");
  return "OpenBLAS runs its AVX2 " + core + " kernels on a CPU with AVX-512" +
         (pinned && *pinned ? std::string(" (OPENBLAS_CORETYPE=") + pinned + " is set)" : std::string()) +
         ": matrix products run at about half the rate of its AVX-512 kernels";
}

std::string coreTypeToPin(std::string_view core, bool cpuHasAvx2, bool cpuHasAvx512) {
  if (core.empty() || !cpuHasAvx2) return {};
  for (std::string_view known : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"})
    if (equalsIgnoringCase(core, known)) return {};
  return cpuHasAvx512 ? "SkylakeX" : "Haswell";
}

bool slowerKernelsThanTheCpuRuns(std::string_view core, bool cpuHasAvx512) {
  return cpuHasAvx512 && (equalsIgnoringCase(core, "Haswell") || equalsIgnoringCase(core, "Zen"));
}

}  // namespace sapiens::blas
