#pragma once
// bf16 mixed precision for a head's training step on the CPU (AMP): inside a MixedPrecisionScope
// LibTorch's autocast runs the convolutions and matrix products in bf16 on bf16 copies of the float32
// weights, cast once per scope (oneDNN's kernels: bf16 operands, float32 sums); the weights' gradients
// come back through the casts as float32, and the loss and the optimiser stay float32.

#include "sapiens/finetune/training_settings.h"
#include "sapiens/model/model.h"

#include <c10/core/Device.h>

namespace sapiens::detail {

/// What a head trains in on `device` for `requested`: BFloat16 (mixed) or Float32. Auto is bf16 where
/// inference's auto is (a CPU with native bf16, SAPIENS_CPU_BF16 not 0), float32 elsewhere, CUDA
/// included. Throws ModelRunError for bf16 on CUDA.
TrainingPrecision resolveTrainingPrecision(TrainingPrecision requested, const c10::Device& device);

/// CPU autocast to bf16 while alive when `enabled`; restores the thread's previous autocast state and
/// drops the cast weights at its end.
class MixedPrecisionScope {
 public:
  explicit MixedPrecisionScope(bool enabled);
  ~MixedPrecisionScope();
  MixedPrecisionScope(const MixedPrecisionScope&) = delete;
  MixedPrecisionScope& operator=(const MixedPrecisionScope&) = delete;

 private:
  bool enabled_;
  bool wasEnabled_ = false;
  c10::ScalarType previousDtype_ = c10::kBFloat16;
};

/// `outputs` with every bf16 tensor cast to float32 (differentiably), for the float32 loss.
ModelOutputs inFloat32(const ModelOutputs& outputs);

}  // namespace sapiens::detail
