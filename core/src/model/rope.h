#pragma once
// Sapiens2's 2-D rotary position embedding (doc section 1.5): tables computed op by op on bfloat16
// tensors from the checkpoint's bf16 periods, and q/k of all tokens rounded to bf16 around the rotation.

#include "sapiens/model/model.h"

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace sapiens::detail {

struct RopeTables {
  at::Tensor sin;  ///< (gridH * gridW, headDim), dtype of the rope computation
  at::Tensor cos;
};

/// `periods`: the bf16 buffer (headDim / 4 entries) on the compute device. Computed on the CPU on
/// every device (bit-identical tables everywhere) and returned on the device of `periods`.
RopeTables ropeTables(const at::Tensor& periods, std::int64_t gridH, std::int64_t gridW,
                      RopePrecision precision);

/// Rotates the last gridH * gridW tokens of x (B, heads, N, d); the leading prefix tokens pass through,
/// but all tokens are cast to the tables' dtype and back, as the official code does.
at::Tensor applyRope(const at::Tensor& x, const RopeTables& tables);

}  // namespace sapiens::detail
