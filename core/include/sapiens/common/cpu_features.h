#pragma once
// What the CPU (and the operating system, which must save the wider registers) supports, for choosing
// vectorised code paths at run time. The build targets baseline x86-64.

namespace sapiens::cpu {

/// AVX2 and FMA.
bool hasAvx2Fma();
/// AVX-512 F, CD, BW, DQ and VL: the subsets of OpenBLAS's SkylakeX kernels and of our AVX-512 code.
bool hasAvx512();

}  // namespace sapiens::cpu
