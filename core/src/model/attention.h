#pragma once
// softmax(q k^T / sqrt(d)) v without mask or dropout.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// q (B, H, Nq, d), k and v (B, Hkv, Nk, d) with Hkv dividing H: query head h reads key/value head
/// h / (H / Hkv). LibTorch >= 2 uses at::scaled_dot_product_attention; 1.13 uses tiledAttention where it
/// applies (AVX-512 CPUs, float32) and attentionByMatrixProducts otherwise.
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

/// The same with two BLAS products per (sample, head) and chunk of queries, the chunk's scores under
/// kScoreChunkBytes; k and v with H heads. Any device and dtype.
at::Tensor attentionByMatrixProducts(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

// 512 queries x 3081 keys at 1024x768: the block stays in the last-level cache between the two products
// (measured ~15% faster than 64 MiB blocks on the reference machine).
inline constexpr long kScoreChunkBytes = 6L << 20;

}  // namespace sapiens::detail
