#include "sapiens/model/compute_options.h"

#include "sapiens/model/model_error.h"

#include <ATen/Context.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

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

c10::ScalarType parseComputeDtype(std::string_view spec) {
  const std::string text = lowercase(spec);
  if (text == "fp32" || text == "float32" || text == "float") return c10::kFloat;
  if (text == "bf16" || text == "bfloat16") return c10::kBFloat16;
  if (text == "fp16" || text == "float16" || text == "half") return c10::kHalf;
  throw ModelRunError(fmt::format("invalid dtype '{}': expected fp32, bf16 or fp16", spec));
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
  return device.is_cuda() ? c10::kBFloat16 : c10::kFloat;
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

}  // namespace sapiens
