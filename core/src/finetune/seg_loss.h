#pragma once
// The seg training loss (per-pixel class-weighted cross-entropy + Dice over the foreground classes; see
// taskLoss) on float32 CPU logits in two fused passes: the forward pass reads the logits once for the
// loss and the Dice sums, the backward pass reads them once more and writes the gradient. The
// composite ATen expression it replaces made some thirty full-resolution tensors per step (29 channels
// at the input size), which dominated a small head's step at 1024x768.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

struct SegLossTargets {
  at::Tensor labels;          ///< (B, H, W) int64, 255 = not labelled
  at::Tensor teacherLabels;   ///< (B, H, W) uint8, the starting head's labels; undefined: not kept
  at::Tensor distillWeights;  ///< (B, 1) float, the weight of teacherLabels
  at::Tensor classWeights;    ///< (C) cross-entropy weight per class
};

/// Whether fusedSegLoss takes these logits: float32 on the CPU, 4-D.
bool fusedSegLossApplies(const at::Tensor& logits);

/// The loss as a scalar tensor, differentiable with respect to `logits` (B, C, H, W).
at::Tensor fusedSegLoss(const at::Tensor& logits, const SegLossTargets& targets);

/// The same loss as a composite of ATen operations (any device and dtype; autograd differentiates it).
at::Tensor compositeSegLoss(const at::Tensor& logits, const SegLossTargets& targets);

}  // namespace sapiens::detail
