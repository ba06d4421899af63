#include "attention.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace sapiens::detail {

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v);
#else
  // One matrix product per (sample, head), which measured ~20% faster than batched matmul on 1.13's CPU
  // kernels. Scores are (q k^T) * scale, the order of the math kernel the reference fixtures used.
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const int64_t batch = q.size(0);
  const int64_t heads = q.size(1);
  const int64_t queries = q.size(2);
  const int64_t bytesPerQuery = k.size(2) * static_cast<int64_t>(q.element_size());
  const int64_t chunk =
      std::clamp<int64_t>(kScoreChunkBytes / std::max<int64_t>(1, bytesPerQuery), 1, queries);
  std::vector<at::Tensor> perHead;
  perHead.reserve(static_cast<std::size_t>(batch * heads));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor qh = q[b][h];
      const at::Tensor keysT = k[b][h].t();
      const at::Tensor vh = v[b][h];
      std::vector<at::Tensor> parts;
      for (int64_t start = 0; start < queries; start += chunk) {
        const at::Tensor scores =
            at::mm(qh.narrow(0, start, std::min(chunk, queries - start)), keysT).mul(scale);
        parts.push_back(at::mm(at::softmax(scores, -1), vh));
      }
      perHead.push_back(parts.size() == 1 ? parts.front() : at::cat(parts, 0));
    }
  }
  return at::stack(perHead, 0).view({batch, heads, queries, v.size(-1)});
#endif
}

}  // namespace sapiens::detail
