#pragma once
// The un-normalised half of a row softmax, vectorised: the CPU attention's hot loop after the matrix
// products. ATen's softmax on 1.13 spends ~3.5x longer on the same rows (its exp is the accurate
// 1-ulp Sleef routine plus a separate normalisation pass); this one is within 4e-7 relative.

#include <ATen/core/Tensor.h>

namespace sapiens::detail {

/// For each row r of `block` (float32, 2-D, unit stride along rows): x = exp(x - max(row)) in place
/// and rowSums[r] = sum of the new row. Returns false, touching nothing, when the CPU lacks AVX2/FMA or
/// the tensor does not fit that description; the caller then uses at::softmax.
bool expShiftedRows(at::Tensor& block, at::Tensor& rowSums);

/// x[i] = exp(x[i]) for i < n: the same polynomial where the CPU has AVX2/FMA, else std::exp. Inputs
/// below about -87 give 0 or a denormal-free tiny value, as for a softmax's shifted logits.
void expInPlace(float* x, std::int64_t n);

}  // namespace sapiens::detail
