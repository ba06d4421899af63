#include "sapiens/model/compute_options.h"

#include "sapiens/common/cpu_features.h"
#include "sapiens/common/log.h"
#include "sapiens/model/model_error.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>

namespace sapiens {

namespace {
std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}
}  // namespace

c10::Device resolveDevice(std::string_view spec) {
  const std::string text = lowercase(spec);
  if (text == "auto") return at::hasCUDA() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (text == "cpu") return c10::Device(c10::kCPU);
  if (text == "cuda" || text.rfind("cuda:", 0) == 0) {
    int index = 0;
    if (text.size() > 5) {
      const std::string number = text.substr(5);
      if (number.empty() || number.size() > 3 || !std::all_of(number.begin(), number.end(), ::isdigit)) {
        throw ModelRunError(fmt::format("invalid device '{}': expected cpu, cuda, cuda:N or auto", spec));
      }
      index = std::stoi(number);
    }
    if (!at::hasCUDA()) {
      throw ModelRunError(
          fmt::format("device '{}' requested, but this LibTorch build has no CUDA support or no "
                      "CUDA device is visible; use --device cpu",
                      spec));
    }
    const auto count = static_cast<int>(at::getNumGPUs());
    if (index >= count) {
      throw ModelRunError(
          fmt::format("device '{}' requested, but only {} CUDA device(s) are visible", spec, count));
    }
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  }
  throw ModelRunError(fmt::format("invalid device '{}': expected cpu, cuda, cuda:N or auto", spec));
}

std::vector<std::string> computeDevices() {
  std::vector<std::string> devices{"cpu"};
  // Asks the CUDA hooks, so it also answers (0) in a CPU-only LibTorch.
  const int count = at::hasCUDA() ? static_cast<int>(at::getNumGPUs()) : 0;
  for (int i = 0; i < count; ++i) devices.push_back(fmt::format("cuda:{}", i));
  return devices;
}

std::vector<std::string> computeDtypeChoices(std::string_view device) {
  if (lowercase(device).rfind("cuda", 0) == 0) return {"bf16", "fp16", "fp32"};
  return {"auto", "fp32", "bf16"};
}

c10::ScalarType parseComputeDtype(std::string_view spec) {
  const std::string text = lowercase(spec);
  if (text == "fp32" || text == "float32" || text == "float") return c10::kFloat;
  if (text == "bf16" || text == "bfloat16") return c10::kBFloat16;
  if (text == "fp16" || text == "float16" || text == "half") return c10::kHalf;
  throw ModelRunError(fmt::format("invalid dtype '{}': expected auto, fp32, bf16 or fp16", spec));
}

std::optional<c10::ScalarType> parseComputeDtypeChoice(std::string_view spec) {
  const std::string text = lowercase(spec);
  if (text.empty() || text == "auto") return std::nullopt;
  return parseComputeDtype(text);
}

c10::ScalarType resolveComputeDtype(std::string_view spec, const c10::Device& device) {
  const std::optional<c10::ScalarType> chosen = parseComputeDtypeChoice(spec);
  return chosen ? *chosen : defaultComputeDtype(device);  // auto measures only when asked for
}

void checkComputeSupported(const c10::Device& device, c10::ScalarType dtype) {
  if (dtype != c10::kFloat && dtype != c10::kBFloat16 && dtype != c10::kHalf) {
    throw ModelRunError(fmt::format("models compute in fp32, bf16 or fp16, not {}", c10::toString(dtype)));
  }
  if (dtype == c10::kHalf && device.is_cpu()) {
    throw ModelRunError(
        "fp16 runs only on CUDA (LibTorch has no half-precision CPU convolutions); use fp32 or bf16 "
        "on the CPU");
  }
}

c10::ScalarType defaultComputeDtype(const c10::Device& device) {
  if (!device.is_cpu()) return c10::kBFloat16;
  return cpuAutoPrecision().dtype;
}

std::string computeDtypeName(c10::ScalarType dtype) {
  switch (dtype) {
    case c10::kFloat:
      return "fp32";
    case c10::kBFloat16:
      return "bf16";
    case c10::kHalf:
      return "fp16";
    default:
      return c10::toString(dtype);
  }
}

std::string CpuBf16Support::features() const {
  std::string out;
  if (avx512Bf16) out = "avx512_bf16";
  if (amxBf16) out += out.empty() ? "amx_bf16" : ", amx_bf16";
  return out.empty() ? "none" : out;
}

namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// An ISA limit below bf16 in the names LibTorch 1.13 (ATEN_CPU_CAPABILITY: default, avx2, avx512) and
// oneDNN (ONEDNN_MAX_CPU_ISA / DNNL_MAX_CPU_ISA: SSE41 .. AVX512_CORE, AVX512_CORE_BF16, ..._AMX, ALL)
// take.
std::string isaLimitBelowBf16() {
  const std::string aten = lowercase(environment("ATEN_CPU_CAPABILITY"));
  if (!aten.empty() && aten.rfind("avx512", 0) != 0) return "ATEN_CPU_CAPABILITY=" + aten;
  for (const char* name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}) {
    std::string isa = environment(name);
    std::transform(isa.begin(), isa.end(), isa.begin(), [](unsigned char c) { return std::toupper(c); });
    if (isa.empty()) continue;
    const bool withBf16 =
        isa == "ALL" || isa.find("BF16") != std::string::npos || isa.find("AMX") != std::string::npos ||
        isa.find("AVX512_CORE_FP16") != std::string::npos || isa.find("AVX10") != std::string::npos;
    if (!withBf16) return std::string(name) + "=" + isa;
  }
  return {};
}

}  // namespace

CpuBf16Support cpuBf16Support() {
  CpuBf16Support s;
  s.avx512Bf16 = cpu::hasAvx512Bf16();
  s.amxBf16 = cpu::hasAmxBf16();
  const std::string value = environment("SAPIENS_CPU_BF16");
  const std::string text = lowercase(value);
  if (text == "0" || text == "off" || text == "false" || text == "no") {
    s.disabledBy = "SAPIENS_CPU_BF16=" + value;
  } else if (text == "1" || text == "on" || text == "true" || text == "yes") {
    s.forced = true;
  }
  if (s.disabledBy.empty()) s.disabledBy = isaLimitBelowBf16();
  return s;
}

GemmRates measureCpuGemmRates(int n, int budgetMs) {
  c10::InferenceMode guard;
  GemmRates rates;
  rates.size = n;
  // A generator of its own: the global one's sequence stays what the caller seeded.
  at::Generator generator = at::detail::createCPUGenerator(0);
  const auto fp32 = at::TensorOptions().dtype(at::kFloat);
  // x W^T with W contiguous, as at::linear multiplies (the models' dominant products).
  const at::Tensor a32 = at::rand({n, n}, generator, fp32).sub_(0.5);
  const at::Tensor b32 = at::rand({n, n}, generator, fp32).sub_(0.5).t();
  const at::Tensor a16 = a32.to(at::kBFloat16);
  const at::Tensor b16 = b32.to(at::kBFloat16);
  at::Tensor c32 = at::mm(a32, b32);  // warm-up: loads the kernels, starts the threads
  at::Tensor c16 = at::mm(a16, b16);
  using Clock = std::chrono::steady_clock;
  const auto time = [](const auto& product) {
    const auto start = Clock::now();
    product();
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double best32 = 1e30, best16 = 1e30;
  const auto end = Clock::now() + std::chrono::milliseconds(budgetMs);
  for (int i = 0; i < 50 && (i == 0 || Clock::now() < end); ++i) {
    best32 = std::min(best32, time([&] { at::mm_out(c32, a32, b32); }));
    best16 = std::min(best16, time([&] { at::mm_out(c16, a16, b16); }));
  }
  const double flop = 2.0 * n * n * static_cast<double>(n);
  rates.fp32Gflops = flop / best32 / 1e9;
  rates.bf16Gflops = flop / best16 / 1e9;
  return rates;
}

CpuPrecisionChoice chooseCpuPrecision(const CpuBf16Support& support, const std::optional<GemmRates>& rates,
                                      const std::string& probeError) {
  CpuPrecisionChoice c;
  c.support = support;
  c.rates = rates;
  c.dtype = at::kFloat;
  if (support.forced) {
    c.dtype = at::kBFloat16;
    c.reason = support.native()
                   ? fmt::format("bf16 forced by SAPIENS_CPU_BF16=1 (native bf16: {})", support.features())
                   : "bf16 forced by SAPIENS_CPU_BF16=1, without native bf16 (slow)";
    return c;
  }
  if (!support.hardware()) {
    c.reason = "no native bf16 (the CPU has neither avx512_bf16 nor amx_bf16)";
    return c;
  }
  if (!support.native()) {
    c.reason = fmt::format("no native bf16 (turned off by {}; the CPU has {})", support.disabledBy,
                           support.features());
    return c;
  }
  if (!rates) {
    c.reason = fmt::format("native bf16 ({}), but the bf16 matrix product could not be measured{}",
                           support.features(), probeError.empty() ? "" : ": " + probeError);
    return c;
  }
  const std::string measured =
      fmt::format("{:.1f} vs {:.1f} GFLOP/s at {}^3", rates->bf16Gflops, rates->fp32Gflops, rates->size);
  if (rates->speedup() >= kCpuBf16MinSpeedup) {
    c.dtype = at::kBFloat16;
    c.reason = fmt::format("native bf16 ({}) and a bf16 matrix product {:.2f}x as fast as fp32 ({})",
                           support.features(), rates->speedup(), measured);
  } else {
    c.reason = fmt::format(
        "native bf16 ({}), but a bf16 matrix product only {:.2f}x as fast as fp32 ({}; auto needs {:.1f}x)",
        support.features(), rates->speedup(), measured, kCpuBf16MinSpeedup);
  }
  return c;
}

const CpuPrecisionChoice& cpuAutoPrecision() {
  static const CpuPrecisionChoice choice = [] {
    const CpuBf16Support support = cpuBf16Support();
    std::optional<GemmRates> rates;
    std::string probeError;
    if (support.native() && !support.forced) {
      try {
        rates = measureCpuGemmRates();
      } catch (const std::exception& e) {
        probeError = e.what();
        probeError.resize(std::min(probeError.find('\n'), probeError.size()));
      }
    }
    CpuPrecisionChoice c = chooseCpuPrecision(support, rates, probeError);
    logger().info("CPU precision auto: {}, {}", computeDtypeName(c.dtype), c.reason);
    return c;
  }();
  return choice;
}

std::string computeDtypeReason(std::string_view spec, const c10::Device& device) {
  if (const auto requested = parseComputeDtypeChoice(spec)) {
    if (device.is_cpu() && *requested == at::kBFloat16 && !cpuBf16Support().native())
      return "requested; the CPU has no native bf16, so bf16 runs slowly";
    return "requested";
  }
  if (!device.is_cpu()) return "auto on CUDA: bf16";
  const CpuPrecisionChoice& c = cpuAutoPrecision();
  return fmt::format("auto on the CPU: {}, {}", computeDtypeName(c.dtype), c.reason);
}

}  // namespace sapiens
