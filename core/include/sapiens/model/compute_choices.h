#pragma once
// What a front end offers in its device and precision choosers, as names (no LibTorch types), and
// whether this CPU has native bf16: the tensor-level parsing, checks and measurement are in
// compute_options.h.

#include <string>
#include <string_view>
#include <vector>

namespace sapiens {

/// The devices this build and machine can run on: "cpu", then "cuda:0", "cuda:1", ... (none in a CPU-only
/// LibTorch).
std::vector<std::string> computeDevices();
/// The precisions offered on `device` ("cpu", "cuda", "cuda:N"), the default first: bf16, fp16, fp32 on
/// CUDA; auto, fp32, bf16 on the CPU (no fp16: see checkComputeSupported).
std::vector<std::string> computeDtypeChoices(std::string_view device);

// --- Native bf16 on the CPU, as "auto" weighs it ---

/// bf16 must run a matrix product at least this many times as fast as fp32 for auto to pick it.
inline constexpr double kCpuBf16MinSpeedup = 1.5;

/// Whether this CPU multiplies bf16 natively, after the environment had its say.
struct CpuBf16Support {
  bool avx512Bf16 = false;  ///< the hardware (and the OS's register state)
  bool amxBf16 = false;
  /// Why native bf16 counts as absent although the hardware has it: "SAPIENS_CPU_BF16=0",
  /// "ATEN_CPU_CAPABILITY=avx2", "ONEDNN_MAX_CPU_ISA=AVX2" (ISAs below bf16). Empty: not turned off.
  std::string disabledBy;
  /// SAPIENS_CPU_BF16=1: auto picks bf16 without measuring, with or without native bf16.
  bool forced = false;

  bool hardware() const { return avx512Bf16 || amxBf16; }
  bool native() const { return hardware() && disabledBy.empty(); }
  /// "avx512_bf16", "avx512_bf16, amx_bf16" or "none".
  std::string features() const;
};

/// The hardware (sapiens::cpu) and the environment, read now.
CpuBf16Support cpuBf16Support();

}  // namespace sapiens
