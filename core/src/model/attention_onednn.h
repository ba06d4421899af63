#pragma once
// softmax(q k^T / sqrt(d)) v for bf16 tensors on a CPU with native bf16: both products through oneDNN's
// matmul (AMX tiles or AVX512_BF16), bf16 operands with float32 sums, for a block of queries at a time;
// between them one pass over the float32 scores makes the exponentials (float32, shifted by the row's
// maximum), their row sums and the bf16 probabilities the second product reads. The output is divided by
// the row sums in float32 and rounded to bf16 once.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// q (B, H, Nq, d), k and v (B, Hkv, Nk, d) are bf16 CPU tensors with unit stride along d, H a multiple
/// of Hkv (query head h reads key/value head h / (H / Hkv)), and no gradient is wanted: what the bf16
/// kernels (this one, attention_amx.h) take.
bool bf16AttentionOperands(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

/// True when oneDnnAttention takes these tensors: bf16AttentionOperands and oneDNN's bf16 matmul is in
/// use (onednn_matmul.h).
bool oneDnnAttentionApplies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

/// The attention as described, as a (B, H, Nq, d) view of a contiguous (B, Nq, H, d) tensor (the usual
/// transpose back to tokens costs no copy). Undefined when oneDNN offers no optimised kernel.
at::Tensor oneDnnAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);

}  // namespace sapiens::detail
