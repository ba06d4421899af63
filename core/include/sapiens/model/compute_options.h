#pragma once
// Where and in which precision a model runs: "cpu", "cuda", "cuda:1", "auto" and auto / fp32 / bf16 / fp16.

#include "sapiens/model/compute_choices.h"

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sapiens {

/// "auto" picks CUDA device 0 when LibTorch sees one, else the CPU. Throws ModelRunError for an unknown
/// spelling or a CUDA device this build or machine does not have.
c10::Device resolveDevice(std::string_view spec);
/// "fp32"/"float32", "bf16"/"bfloat16", "fp16"/"float16"/"half". Throws ModelRunError otherwise ("auto"
/// included: it depends on the device, see parseComputeDtypeChoice).
c10::ScalarType parseComputeDtype(std::string_view spec);
/// "auto" or "": std::nullopt, the device's default (defaultComputeDtype); else parseComputeDtype(spec).
std::optional<c10::ScalarType> parseComputeDtypeChoice(std::string_view spec);
/// parseComputeDtypeChoice(spec), or defaultComputeDtype(device) for "auto" and "".
c10::ScalarType resolveComputeDtype(std::string_view spec, const c10::Device& device);
/// Throws ModelRunError for a combination the kernels cannot run: fp16 on the CPU (LibTorch's CPU
/// convolutions have no half-precision kernels).
void checkComputeSupported(const c10::Device& device, c10::ScalarType dtype);
/// What "auto" runs: bf16 on CUDA; on the CPU cpuAutoPrecision().dtype (bf16 where the CPU has native
/// bf16 and measures it fast enough, else fp32).
c10::ScalarType defaultComputeDtype(const c10::Device& device);
/// "fp32", "bf16", "fp16" (or c10's name for anything else).
std::string computeDtypeName(c10::ScalarType dtype);

// --- What "auto" picks on the CPU ---

/// Best-of rates of one square matrix product, both dtypes on the same operands' shape.
struct GemmRates {
  int size = 0;  ///< n of the n x n x n product
  double fp32Gflops = 0;
  double bf16Gflops = 0;
  double speedup() const { return fp32Gflops > 0 ? bf16Gflops / fp32Gflops : 0; }
};

/// Times an n x n by n x n product in fp32 and bf16 on the CPU (the calling thread's intra-op pool), one
/// warm-up each and then alternating until about `budgetMs` have passed (at least one timed product
/// each). Throws what LibTorch throws.
GemmRates measureCpuGemmRates(int n = 1024, int budgetMs = 100);

struct CpuPrecisionChoice {
  CpuBf16Support support;
  std::optional<GemmRates> rates;  ///< measured only with native bf16 (and not forced)
  c10::ScalarType dtype = c10::kFloat;
  /// Why, one clause: "no native bf16 (the CPU has neither avx512_bf16 nor amx_bf16)", "no native bf16
  /// (turned off by SAPIENS_CPU_BF16=0)", "native bf16 (amx_bf16) and a bf16 matrix product 2.4x as
  /// fast as fp32 (...)", ...
  std::string reason;
};

/// The decision alone: bf16 when forced, or with native bf16 and rates->speedup() >= kCpuBf16MinSpeedup;
/// fp32 otherwise (also when rates are missing or failed: `probeError`).
CpuPrecisionChoice chooseCpuPrecision(const CpuBf16Support& support, const std::optional<GemmRates>& rates,
                                      const std::string& probeError = {});

/// What auto runs on the CPU in this process: decided (and measured, ~100 ms, only with native bf16) on
/// the first call, logged at info with its reason, then cached.
const CpuPrecisionChoice& cpuAutoPrecision();

/// Why `dtype` runs for the request `spec` ("", "auto", "fp32", ...) on `device`, for manifests and logs:
/// "auto on the CPU: fp32, no native bf16 (...)", "auto on CUDA: bf16", "requested".
std::string computeDtypeReason(std::string_view spec, const c10::Device& device);

}  // namespace sapiens
