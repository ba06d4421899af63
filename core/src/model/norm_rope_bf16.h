#pragma once
// RMSNorm, and RMSNorm then the rotary embedding, over bf16 tokens in one pass on CPUs with AVX512_BF16:
// each row is read once, normalised and rotated in float32, and written once, with the roundings to bf16
// the op-by-op composite makes (x * rsqrt(mean(x^2) + eps) rounded, times the weight rounded; the
// rotation's two products and their sum each rounded), instead of six to ten passes over the tokens with
// float32 tensors between them.

#include "rope.h"

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// Whether the fused passes take x: a contiguous bf16 CPU tensor, an AVX512_BF16 CPU with the bf16 path of
/// onednn_matmul.h in use (one switch for the whole path), no gradient wanted, and a bf16 weight of the
/// last dimension's size.
bool fusedNormApplies(const at::Tensor& x, const at::Tensor& weight);

/// rmsNorm(x, weight, eps) for contiguous bf16 x (..., C).
at::Tensor rmsNormBf16(const at::Tensor& x, const at::Tensor& weight, double eps);

/// applyRope(rmsNorm(x, weight, eps).permute(0, 2, 1, 3), tables) for contiguous x laid out (B, N, H, d)
/// and bf16 tables: returns (B, H, N, d), contiguous, each head's tokens side by side as the attention's
/// products read them best. No tables: the norm alone.
at::Tensor rmsNormRopeBf16(const at::Tensor& x, const at::Tensor& weight, double eps, const RopeTables* rope);

}  // namespace sapiens::detail
