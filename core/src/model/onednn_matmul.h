#pragma once
// bf16 linear layers on the CPU through oneDNN's matmul primitive directly (libdnnl), where the CPU has
// native bf16 (AVX512_BF16, AMX-BF16 tiles where present): bf16 operands, float32 sums, and what follows
// the product (the bias, SiLU, a per-column scale, an element-wise product and a residual add) applied to
// the float32 sums before the one rounding to bf16. LibTorch 1.13 reaches the same kernels through
// ideep, but with every epilogue as a separate bf16 pass over memory that rounds again.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// What is applied to x W^T + b, in this order, before the result is rounded to x's dtype.
struct MatmulEpilogue {
  bool silu = false;
  at::Tensor scale;     ///< (N): multiplies each output column (layer scale)
  at::Tensor multiply;  ///< the output's shape: multiplies element-wise (the SwiGLU gate)
  at::Tensor add;       ///< the output's shape: added last (the residual)
};

/// Whether the bf16 kernels on oneDNN are in use for bf16 models: oneDNN was built in, the CPU has
/// AVX512_BF16 and SAPIENS_ONEDNN_MATMUL=0 does not turn them off. (Whether a model is bf16 at all is
/// --dtype's choice: auto, SAPIENS_CPU_BF16.)
bool oneDnnBf16InUse();

/// Whether oneDnnLinear takes these operands: oneDnnBf16InUse(), x and weight (N, K) are bf16 CPU tensors,
/// and no gradient is wanted.
bool oneDnnLinearApplies(const at::Tensor& x, const at::Tensor& weight);

/// y = epilogue(x W^T + b) for x (..., K), weight (N, K), bias (N) or undefined. Returns an undefined
/// tensor when oneDNN offers no optimised kernel for the shapes (the caller then computes it in ATen).
/// Written into `out` when it is defined: a contiguous tensor of y's shape and dtype that the caller
/// reuses (a buffer freed and taken again every layer leaves holes that the heap grows around).
at::Tensor oneDnnLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                        const MatmulEpilogue& epilogue = {}, const at::Tensor& out = {});

/// The same in ATen ops (bf16 roundings between them): the reference and the fallback.
at::Tensor linearWithEpilogue(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                              const MatmulEpilogue& epilogue);

/// oneDnnLinear where it takes the operands and has a kernel for them, else linearWithEpilogue: what
/// the model's linear layers (and the benchmarks' floor) run.
at::Tensor linearBestPath(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                          const MatmulEpilogue& epilogue = {});

}  // namespace sapiens::detail
