#pragma once
// Analytic floating-point operation counts of a forward pass (2 per multiply-accumulate), for the
// benchmarks. Counts the convolutions, the linear layers and the attention products (QK^T and AV);
// norms, activations, RoPE and softmax are elementwise and left out. Note that the model cards'
// "FLOPs" are multiply-accumulates of the linear layers only (about 1/2.7 of this figure for 0.4b).

#include "sapiens/model/architecture.h"

namespace sapiens {

struct FlopCount {
  double backbone = 0;   ///< patch embedding + blocks (+ tokenizer)
  double attention = 0;  ///< the part of `backbone` spent in QK^T and AV
  double linear = 0;     ///< the part of `backbone` in the blocks' linear layers
  double head = 0;
  double headOnFeatures = 0;  ///< the part of `head` in layers reading the backbone's features (with a
                              ///< frozen backbone, training needs no gradient of their input)
  double total() const { return backbone + head; }
};

FlopCount forwardFlops(const Architecture& arch, int batch, int height, int width);

/// The dominant matrix product of the backbone at this input: the SwiGLU in-projection,
/// (batch * tokens) x embedDim times embedDim x 2*ffnDim. Returned as {M, K, N}.
struct GemmShape {
  long long m = 0, k = 0, n = 0;
};
GemmShape dominantGemm(const Architecture& arch, int batch, int height, int width);

}  // namespace sapiens
