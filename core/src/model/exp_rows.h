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

/// The instruction sets the exponentials can run on; the fastest the CPU has is used unless one is named.
enum class ExpPath { Scalar, Avx2, Avx512 };
bool expPathAvailable(ExpPath path);

/// x[i] = exp(x[i]) for i < n: the same polynomial where the CPU has AVX2/FMA or AVX-512, else
/// std::exp. Within 4e-7 relative of std::exp; NaN stays NaN, +inf gives +inf, inputs below about -87.34
/// give 0 (std::exp gives a denormal there). A path the CPU lacks runs as Scalar.
void expInPlace(float* x, std::int64_t n);
void expInPlace(float* x, std::int64_t n, ExpPath path);

}  // namespace sapiens::detail
