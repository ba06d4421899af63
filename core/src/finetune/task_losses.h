#pragma once
// The official training losses of each head (section 5 of the model notes), on a batch of head outputs
// at input resolution and stacked targets. Pointmap is simplified: L1 on the mean-depth-normalised
// canonical points (x2, clamped at 4) + SiLog on depth (x1) + the scale L1 (x4); the multiscale,
// intrinsics-consistency, shift-invariant and normal terms are left out.

#include "sapiens/model/model.h"
#include "training_samples.h"

#include <ATen/core/Tensor.h>

#include <optional>

namespace sapiens::detail {

/// Seg: CE weighted per class (ignore 255, mean over all pixels) + Dice (background excluded). Pose:
/// 10 x weighted heatmap MSE. Normal: 10 x (1 - cos) + L1 + 10 x gradient MSE. Albedo: 2 x L1 +
/// 2 x gradient MSE / 2 + chromaticity L1. A scalar tensor.
at::Tensor taskLoss(Task task, const ModelOutputs& outputs, const SampleTargets& targets,
                    const at::Tensor& classWeights);

/// Accumulates the task metric over batches (see MetricInfo in training_progress.h).
class MetricAccumulator {
 public:
  MetricAccumulator(Task task, std::int64_t classes) : task_(task), classes_(classes) {}
  void add(const ModelOutputs& outputs, const SampleTargets& targets);
  /// Seg: mIoU over the classes with labelled pixels (what the labels teach); the others: the metric.
  double value() const;
  /// Seg: mIoU over every class predicted or labelled on the labelled pixels; nullopt for the others.
  std::optional<double> allClassValue() const;

 private:
  Task task_;
  std::int64_t classes_;
  at::Tensor intersection_, union_, labelled_;  // seg, per class
  double sum_ = 0;
  double count_ = 0;
};

}  // namespace sapiens::detail
