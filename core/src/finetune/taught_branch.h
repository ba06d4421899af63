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

}  // namespace sapiens::detail
