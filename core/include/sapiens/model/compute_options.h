#pragma once
// Where and in which precision a model runs: "cpu", "cuda", "cuda:1", "auto" and fp32 / bf16 / fp16.

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>
#include <string>
#include <string_view>

namespace sapiens {

/// "auto" picks CUDA device 0 when LibTorch sees one, else the CPU. Throws ModelRunError for an unknown
/// spelling or a CUDA device this build or machine does not have.
c10::Device resolveDevice(std::string_view spec);
/// "fp32"/"float32", "bf16"/"bfloat16", "fp16"/"float16"/"half". Throws ModelRunError otherwise.
c10::ScalarType parseComputeDtype(std::string_view spec);
/// Throws ModelRunError for a combination the kernels cannot run: fp16 on the CPU (LibTorch's CPU
/// convolutions have no half-precision kernels).
void checkComputeSupported(const c10::Device& device, c10::ScalarType dtype);
/// fp32 on the CPU, bf16 on CUDA.
c10::ScalarType defaultComputeDtype(const c10::Device& device);
/// "fp32", "bf16", "fp16" (or c10's name for anything else).
std::string computeDtypeName(c10::ScalarType dtype);

}  // namespace sapiens
