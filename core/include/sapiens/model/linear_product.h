#pragma once
// The matrix product x W^T as the models' linear layers compute it on the tensors' device and dtype
// (oneDNN's bf16 kernels on a CPU with native bf16, else at::linear): what the benchmarks' floor must
// time, so that a faster kernel of the model's own is never measured against a slower floor.

#include <ATen/core/Tensor.h>

namespace sapiens {

at::Tensor linearProduct(const at::Tensor& x, const at::Tensor& weight);

/// The same into `out`, a contiguous tensor of the product's shape, dtype and device (what the
/// benchmarks' floor reuses, so that its samples take no memory of their own between the model's runs).
void linearProductInto(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& out);

}  // namespace sapiens
