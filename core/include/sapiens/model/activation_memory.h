#pragma once
// An analytic upper estimate of the activation memory a forward pass holds at its peak, to judge the
// measured memory of a run against (bench): weights + this is what inference needs; the rest is overhead.

#include "sapiens/model/architecture.h"

#include <cstdint>

namespace sapiens {

/// Bytes of the largest set of activations alive at once: inside a transformer block the larger of the
/// attention phase (about nine token x C tensors: input, normed input, q, k, v, their RoPE copies, the
/// attention output and its transposed copy, plus one block of scores) and the SwiGLU phase (four token x
/// C tensors and the token x 2F projection); in the head the largest input + output pair of a layer.
/// Plus the input image. `elementSize`: bytes per activation value (4 for fp32, 2 for bf16/fp16).
std::int64_t peakActivationBytes(const Architecture& arch, int batch, int height, int width, int elementSize);

}  // namespace sapiens
