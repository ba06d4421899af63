#include "sapiens/finetune/training_settings.h"

#include <algorithm>
#include <cmath>

namespace sapiens {

std::optional<TrainingPrecision> parseTrainingPrecision(std::string_view spelling) {
  if (spelling == "auto") return TrainingPrecision::Auto;
  if (spelling == "fp32" || spelling == "float32") return TrainingPrecision::Float32;
  if (spelling == "bf16" || spelling == "bfloat16") return TrainingPrecision::BFloat16;
  return std::nullopt;
}

std::string_view trainingPrecisionName(TrainingPrecision precision) {
  switch (precision) {
    case TrainingPrecision::Float32:
      return "fp32";
    case TrainingPrecision::BFloat16:
      return "bf16";
    default:
      return "auto";
  }
}

int effectiveWarmupSteps(const TrainingSettings& settings) {
  return settings.warmupSteps >= 0 ? settings.warmupSteps : std::min(500, settings.steps / 10);
}

double learningRateAt(const TrainingSettings& settings, int step) {
  constexpr double kWarmupStartFactor = 1e-3;  // the official LinearLR start factor
  const int warmup = std::min(effectiveWarmupSteps(settings), settings.steps);
  if (step < warmup) {
    const double progress = static_cast<double>(step) / warmup;
    return settings.learningRate * (kWarmupStartFactor + (1.0 - kWarmupStartFactor) * progress);
  }
  const int decaySteps = settings.steps - warmup;
  if (decaySteps <= 0) return settings.learningRate;
  const double progress = std::min(1.0, static_cast<double>(step - warmup) / decaySteps);
  return settings.learningRate * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace sapiens
