#include "attention.h"

#include "attention_amx.h"
#include "attention_onednn.h"
#include "attention_tiled.h"
#include "exp_rows.h"
#include "forward_part_timer.h"
#include "layers.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>

namespace sapiens::detail {

namespace {

// Query head h reads key/value head h / (H / Hkv): consecutive groups.
at::Tensor repeatHeads(const at::Tensor& t, int64_t heads) {
  return t.size(1) == heads ? t : t.repeat_interleave(heads / t.size(1), 1);
}

}  // namespace

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  const ForwardPartTimer timer(ForwardPart::Attention);
  if (amxAttentionApplies(q, k, v)) return amxAttention(q, k, v);
  if (oneDnnAttentionApplies(q, k, v)) {
    // v head-major, as oneDNN's products read best (the AMX kernel lays v out itself).
    at::Tensor out = oneDnnAttention(q, k, v.contiguous());
    if (out.defined()) return out;
  }
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, repeatHeads(k, q.size(1)), repeatHeads(v, q.size(1)));
#else
  if (tiledAttentionApplies(q, k, v)) return tiledAttention(q, k, v);
  return attentionByMatrixProducts(q, repeatHeads(k, q.size(1)), repeatHeads(v, q.size(1)));
#endif
}

at::Tensor attentionByMatrixProducts(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  // One pair of matrix products per (sample, head) and chunk of queries, into buffers allocated once:
  // scores = (q k^T) * scale in one GEMM (alpha = scale rounds exactly like a separate multiply), the
  // softmax's exponentials in place, then the product with v written transposed (v^T p^T, measured ~20%
  // faster than p v for these shapes) straight into its slice of the output, normalised there.
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const int64_t batch = q.size(0);
  const int64_t heads = q.size(1);
  const int64_t queries = q.size(2);
  const int64_t keys = k.size(2);
  const int64_t bytesPerQuery = keys * static_cast<int64_t>(q.element_size());
  const int64_t chunk =
      std::clamp<int64_t>(kScoreChunkBytes / std::max<int64_t>(1, bytesPerQuery), 1, queries);
  at::Tensor outT = at::empty({batch, heads, v.size(-1), queries}, q.options());
  at::Tensor scores = at::empty({chunk, keys}, q.options());
  at::Tensor rowSums = at::empty({chunk}, q.options().dtype(at::kFloat));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor qh = q[b][h];
      const at::Tensor keysT = k[b][h].t();
      // v^T p^T with v^T a view is a layout whose bf16 sums LibTorch's generic CPU GEMM rounds to bf16
      // (10 % off over 3072 keys, layers.h); with v^T contiguous it sums in float32.
      const at::Tensor valuesT = cpuGemmRoundsSums(v) ? v[b][h].t().contiguous() : v[b][h].t();
      const at::Tensor outH = outT[b][h];
      for (int64_t start = 0; start < queries; start += chunk) {
        const int64_t rows = std::min(chunk, queries - start);
        at::Tensor block = scores.narrow(0, 0, rows);
        at::Tensor target = outH.narrow(1, start, rows);
        at::addmm_out(block, block, qh.narrow(0, start, rows), keysT, /*beta=*/0.0, /*alpha=*/scale);
        if (expShiftedRows(block, rowSums)) {
          at::mm_out(target, valuesT, block.t());
          target.div_(rowSums.narrow(0, 0, rows).view({1, rows}));
        } else {
          at::_softmax_out(block, block, -1, /*half_to_float=*/false);
          at::mm_out(target, valuesT, block.t());
        }
      }
    }
  }
  return outT.transpose(2, 3);
}

}  // namespace sapiens::detail
