#pragma once
// The Sapiens2 backbone forward pass (doc sections 1.4-1.8, 1.10).

#include "parameter_access.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/model.h"

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

struct BackboneResult {
  at::Tensor tokens;   ///< (B, N, C) after the final RMSNorm, prefix tokens included
  at::Tensor featmap;  ///< (B, C, h, w): the patch tokens of `tokens`
};

/// `p` resolves bare backbone keys ("blocks.0.ln1.weight"). Intermediates go to `capture` when not null.
BackboneResult runBackbone(const ParameterAccess& p, const BackboneArch& arch, const at::Tensor& input,
                           RopePrecision ropePrecision, ModelOutputs* capture);

/// Windows over the window grid are processed in chunks of at most this many.
inline constexpr int64_t kTokenizerWindowChunk = 1024;

}  // namespace sapiens::detail
