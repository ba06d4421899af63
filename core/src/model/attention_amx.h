#pragma once
// softmax(q k^T / sqrt(d)) v for bf16 tensors on a CPU with AMX-BF16 tiles, 16 queries at a time: the
// scores of the block against every key by tile products (bf16 operands, float32 sums) into a float32
// row buffer that stays in L2, one pass making the exponentials and their bf16 copy, then p v by tile
// products again and one division by the row sums before the single rounding to bf16. Keys and values
// are laid out once per call in the tiles' pair-interleaved form. The float32 softmax is the kernel's
// cost; the products run near the tiles' rate, where oneDNN's matmul on the same operands reached only
// ~125 GFLOP/s with a depth of 64.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// True when amxAttention takes these tensors: bf16 CPU tensors as bf16AttentionOperands says, an even
/// head width, a CPU with AMX-BF16 and AVX512_BF16 whose tiles Linux granted to the process, and
/// SAPIENS_AMX_ATTENTION=0 not set.
bool amxAttentionApplies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

/// The attention as a (B, H, Nq, d) view of a contiguous (B, Nq, H, d) tensor.
at::Tensor amxAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

}  // namespace sapiens::detail
