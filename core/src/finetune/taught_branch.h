#pragma once
// Keeping what the frames do not teach, exactly: a pose or seg head whose every layer is shared by all
// its outputs cannot learn some keypoints or classes without moving the others (they read the same
// features). So the head is widened to two branches side by side in the same layout: the starting
// head, untouched, which alone feeds the outputs nobody labelled, and a copy of it, which alone feeds
// the labelled ones and is what trains. Each layer's weight is block-diagonal (deconv and k x k conv
// layers; the norms are per channel), so the branches never mix, and at the start the widened head
// predicts exactly what the starting head does.

#include "sapiens/model/architecture.h"

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

namespace sapiens::detail {

struct TaughtBranchHead {
  HeadArch head;                              ///< the widened architecture
  std::map<std::string, at::Tensor> tensors;  ///< its tensors, by full key (decode_head.*)
  /// Per key, 1 where the entry belongs to the taught branch (trains), 0 where it is the starting head or
  /// a zero block between the branches (held).
  std::map<std::string, at::Tensor> trainable;
};

/// The two-branch head of `task` (pose or seg) from the starting `head` and its `tensors` (full keys);
/// `taught` (bool, one per output) says which outputs read the trained branch. Throws
/// std::invalid_argument for another task or a tensor the layout does not name.
TaughtBranchHead widenForTaughtOutputs(Task task, const HeadArch& head,
                                       const std::map<std::string, at::Tensor>& tensors,
                                       const at::Tensor& taught);
/// The same with `copy` (the starting head's keys and shapes) as the taught branch's values.
TaughtBranchHead widenForTaughtOutputs(Task task, const HeadArch& head,
                                       const std::map<std::string, at::Tensor>& tensors,
                                       const std::map<std::string, at::Tensor>& copy,
                                       const at::Tensor& taught);

/// Training the two-branch head without computing it: the widened layers' zero blocks would make each
/// layer 4x the starting one's work, and the starting branch never changes. So the copy trains at the
/// starting head's size, its last layer computing the taught outputs alone, and the untaught outputs
/// come from the starting head's predictions on the same features (cached by the caller or
/// `startingOutputs`). `widened()` gives the two-branch head these compute, to run and save.
class TaughtBranchTraining {
 public:
  TaughtBranchTraining(Task task, HeadArch head, std::map<std::string, at::Tensor> starting,
                       const at::Tensor& taught);

  const char* outputName() const;                  ///< pose_heatmaps or seg_logits
  std::vector<at::Tensor> trainedTensors() const;  ///< the copy's tensors (requires grad), by key order
  std::vector<std::string> trainedNames() const;
  /// The starting head's output on `featmap`, without gradients.
  at::Tensor startingOutputs(const at::Tensor& featmap) const;
  /// The two-branch head's output: `untaught` (the starting head's output on these features) with the
  /// taught outputs computed by the copy, in untaught's dtype. When the caller hands over the only
  /// reference to `untaught` (a temporary), its memory holds the result.
  at::Tensor forward(const at::Tensor& featmap, at::Tensor untaught) const;
  /// Call after the copy's tensors changed, before widened().
  void copyChanged() { widenedCurrent_ = false; }
  const TaughtBranchHead& widened();

 private:
  Task task_;
  HeadArch head_;
  std::map<std::string, at::Tensor> starting_, copy_;
  at::Tensor taught_, taughtIndex_;
  TaughtBranchHead widened_;
  bool widenedCurrent_ = true;
};

}  // namespace sapiens::detail
