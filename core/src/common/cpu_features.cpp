#include "sapiens/common/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cstdint>

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

namespace {

#if defined(__x86_64__) || defined(__i386__)
struct CpuidRegisters {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool valid = false;
};

CpuidRegisters cpuidLeaf7(unsigned subleaf) {
  CpuidRegisters r;
  if (__get_cpuid_max(0, nullptr) < 7) return r;
  r.valid = __get_cpuid_count(7, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx) != 0;
  return r;
}

// The register state the OS saves (XCR0), when it allows reading it (CPUID.1:ECX.OSXSAVE).
std::uint64_t enabledXState() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return 0;
  unsigned low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (static_cast<std::uint64_t>(high) << 32) | low;
}
#endif

}  // namespace

// CPUID.(EAX=7,ECX=1):EAX bit 5 (the compilers' __builtin_cpu_supports names differ between versions).
bool hasAvx512Bf16() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool supported = [] {
    if (!hasAvx512()) return false;
    const CpuidRegisters r = cpuidLeaf7(0);
    if (!r.valid || r.eax < 1) return false;  // EAX of subleaf 0: the highest subleaf
    const CpuidRegisters s = cpuidLeaf7(1);
    return s.valid && (s.eax & (1u << 5)) != 0;
  }();
  return supported;
#else
  return false;
#endif
}

// CPUID.(EAX=7,ECX=0):EDX bits 22 (AMX-BF16) and 24 (AMX-TILE), and XCR0 bits 17-18 (XTILECFG,
// XTILEDATA): the OS saves the tiles (Linux still grants them per process, which oneDNN requests).
bool hasAmxBf16() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool supported = [] {
    const CpuidRegisters r = cpuidLeaf7(0);
    if (!r.valid || !(r.edx & (1u << 22)) || !(r.edx & (1u << 24))) return false;
    constexpr std::uint64_t kTileState = (1ull << 17) | (1ull << 18);
    return (enabledXState() & kTileState) == kTileState;
  }();
  return supported;
#else
  return false;
#endif
}

}  // namespace sapiens::cpu
