#include "mixed_precision.h"

#include "model/cpu_autocast.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model_error.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>

#include <fmt/format.h>

namespace sapiens::detail {

TrainingPrecision resolveTrainingPrecision(TrainingPrecision requested, const c10::Device& device) {
  if (requested == TrainingPrecision::Auto)
    return device.is_cpu() && defaultComputeDtype(device) == c10::kBFloat16 ? TrainingPrecision::BFloat16
                                                                            : TrainingPrecision::Float32;
  if (requested == TrainingPrecision::BFloat16 && !device.is_cpu())
    throw ModelRunError(fmt::format(
        "bf16 mixed-precision fine-tuning runs on the CPU only; {} trains in fp32", device.str()));
  return requested;
}

MixedPrecisionScope::MixedPrecisionScope(bool enabled) : enabled_(enabled) {
  if (!enabled_) return;
  wasEnabled_ = cpuAutocastEnabled();
  previousDtype_ = cpuAutocastDtype();
  setCpuAutocast(true, c10::kBFloat16);
  at::autocast::increment_nesting();
}

MixedPrecisionScope::~MixedPrecisionScope() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  setCpuAutocast(wasEnabled_, previousDtype_);
}

ModelOutputs inFloat32(const ModelOutputs& outputs) {
  ModelOutputs converted;
  for (const auto& [name, tensor] : outputs.all())
    converted.add(name, tensor.scalar_type() == at::kBFloat16 ? tensor.to(at::kFloat) : tensor);
  return converted;
}

}  // namespace sapiens::detail
