#pragma once
// softmax(q k^T / sqrt(d)) v on the CPU in tiles that stay in one core's caches: for a block of 96
// queries, the scores of 256 keys at a time are made, exponentiated and multiplied into the output
// while they are still in L2, with the running maximum rescaling what was accumulated before (the
// "flash attention" order). No score block ever reaches memory, there is no separate softmax pass, and
// none of the BLAS calls' zeroing and packing of 64-wide products. AVX-512 micro-kernels; measured
// against the two-GEMM path in docs/PERFORMANCE.md.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// True when tiledAttention can compute this product: an AVX-512 CPU, float32 CPU tensors (B, H, N, d)
/// with unit stride along d, the same d for q, k and v, k and v with the same heads dividing q's (query
/// head h reads key/value head h / (H / Hkv)), and no gradient wanted.
bool tiledAttentionApplies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

/// The attention of q (B, H, Nq, d) over k, v (B, Hkv, Nk, d). Returns (B, H, Nq, d) as a view of a
/// contiguous (B, Nq, H, d) tensor, so that the usual transpose back to tokens costs no copy.
at::Tensor tiledAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

}  // namespace sapiens::detail
