#include "sapiens/common/blas_kernels.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>

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

bool slowerKernelsThanTheCpuRuns(std::string_view core, bool cpuHasAvx512) {
  return cpuHasAvx512 && (equalsIgnoringCase(core, "Haswell") || equalsIgnoringCase(core, "Zen"));
}

}  // namespace sapiens::blas
