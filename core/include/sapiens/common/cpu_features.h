#pragma once
// What the CPU (and the operating system, which must save the wider registers) supports, for choosing
// vectorised code paths at run time. The build targets baseline x86-64.

namespace sapiens::cpu {

/// AVX2 and FMA.
bool hasAvx2Fma();
/// AVX-512 F, CD, BW, DQ and VL: the subsets of OpenBLAS's SkylakeX kernels and of our AVX-512 code.
bool hasAvx512();
/// AVX512_BF16 (Cooper Lake, Sapphire Rapids and later, Zen 4 and later): bf16 dot products in the
/// AVX-512 registers, which oneDNN's bf16 matrix products use. Implies hasAvx512().
bool hasAvx512Bf16();
/// AMX-BF16 (Sapphire Rapids and later): bf16 tile matrix products, with the tile state enabled by the
/// operating system.
bool hasAmxBf16();

}  // namespace sapiens::cpu
