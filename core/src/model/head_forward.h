#pragma once
// The task heads (doc sections 2.2-2.6) on the backbone's featmap.

#include "parameter_access.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/model.h"

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// `p` resolves keys under "decode_head.". Adds the head's named outputs (pose_heatmaps, seg_logits,
/// normal, albedo, matting, or pointmap + scale) to `out`.
void runHead(const ParameterAccess& p, Task task, const HeadArch& head, const at::Tensor& featmap,
             ModelOutputs& out);

/// The pose and seg heads' body, what their last 1x1 layer (conv_pose, conv_seg) reads.
at::Tensor runDeconvConvBody(const ParameterAccess& p, const HeadArch& head, at::Tensor x);

}  // namespace sapiens::detail
