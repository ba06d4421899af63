#include "sapiens/common/cpu_features.h"

namespace sapiens::cpu {

// GCC's __builtin_cpu_supports also checks that the OS enabled the register state (XCR0).
bool hasAvx2Fma() {
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
}

bool hasAvx512() {
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
                                __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                                __builtin_cpu_supports("avx512vl");
  return supported;
}

}  // namespace sapiens::cpu
