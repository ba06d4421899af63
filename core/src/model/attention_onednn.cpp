#include "attention_onednn.h"

#include "onednn_matmul.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#ifdef SAPIENS_HAVE_ONEDNN
#include "onednn_engine.h"
#include "softmax_rows_bf16.h"

#include <fmt/format.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sapiens::detail {

namespace {

bool fits(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && t.scalar_type() == at::kBFloat16 && t.dim() == 4 && t.stride(3) == 1 &&
         !t.is_conj() && !t.is_neg();
}

}  // namespace

bool bf16AttentionOperands(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  if (!fits(q) || !fits(k) || !fits(v)) return false;
  if (c10::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad()))
    return false;
  const int64_t depth = q.size(3);
  return depth > 0 && k.size(3) == depth && v.size(3) == depth && k.size(0) == q.size(0) &&
         v.size(0) == q.size(0) && k.size(1) == v.size(1) && k.size(1) > 0 && q.size(1) % k.size(1) == 0 &&
         k.size(2) == v.size(2) && k.size(2) > 0 && q.size(2) > 0;
}

bool oneDnnAttentionApplies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return bf16AttentionOperands(q, k, v) && oneDnnBf16InUse();
}

#ifdef SAPIENS_HAVE_ONEDNN

namespace {

// Queries per block: their float32 scores over 3081 keys (3 MiB) and bf16 probabilities stay in L2.
constexpr int64_t kQueryBlock = 256;

using Dims = dnnl::memory::dims;

struct Geometry {
  int64_t heads, kvHeads, queries, keys, depth;
  int64_t qRow, kRow, vRow;  // element strides between tokens
  float scale;
};

// The operands of one block of `rows` queries, read and written in place: q's rows, k as a (d, keys)
// matrix, the float32 scores, the bf16 probabilities, v, and the float32 un-normalised output.
using Memory = dnnl::memory;
Memory::desc queryRows(const Geometry& g, int64_t rows) {
  return {Dims{rows, g.depth}, Memory::data_type::bf16, Dims{g.qRow, 1}};
}
Memory::desc keysTransposed(const Geometry& g) {
  return {Dims{g.depth, g.keys}, Memory::data_type::bf16, Dims{1, g.kRow}};
}
Memory::desc scoreRows(const Geometry& g, int64_t rows) {
  return {Dims{rows, g.keys}, Memory::data_type::f32, Memory::format_tag::ab};
}
Memory::desc probabilityRows(const Geometry& g, int64_t rows) {
  return {Dims{rows, g.keys}, Memory::data_type::bf16, Memory::format_tag::ab};
}
Memory::desc values(const Geometry& g) {
  return {Dims{g.keys, g.depth}, Memory::data_type::bf16, Dims{g.vRow, 1}};
}
Memory::desc outputRows(const Geometry& g, int64_t rows) {
  return {Dims{rows, g.depth}, Memory::data_type::f32, Memory::format_tag::ab};
}

// scores = q k^T, then out = p v.
dnnl::matmul::primitive_desc describeScores(const Geometry& g, int64_t rows) {
  return {dnnl::matmul::desc(queryRows(g, rows), keysTransposed(g), scoreRows(g, rows)), oneDnnEngine()};
}
dnnl::matmul::primitive_desc describeValues(const Geometry& g, int64_t rows) {
  return {dnnl::matmul::desc(probabilityRows(g, rows), values(g), outputRows(g, rows)), oneDnnEngine()};
}

struct Products {
  const std::optional<dnnl::matmul>& scores;
  const std::optional<dnnl::matmul>& values;
};

Products productsFor(const Geometry& g, int64_t rows) {
  const std::string shape = fmt::format("{}x{}x{} strides {} {} {} t{}", rows, g.keys, g.depth, g.qRow,
                                        g.kRow, g.vRow, at::get_num_threads());
  return {cachedMatmul("attention scores " + shape, [&] { return describeScores(g, rows); }),
          cachedMatmul("attention values " + shape, [&] { return describeValues(g, rows); })};
}

void* address(const at::Tensor& t, int64_t b, int64_t h, int64_t token) {
  return static_cast<c10::BFloat16*>(t.data_ptr()) + b * t.stride(0) + h * t.stride(1) + token * t.stride(2);
}

}  // namespace

at::Tensor oneDnnAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  TORCH_CHECK(oneDnnAttentionApplies(q, k, v), "oneDnnAttention: unsupported tensors or CPU");
  const int64_t batch = q.size(0);
  Geometry g{q.size(1),   k.size(1),   q.size(2),
             k.size(2),   q.size(3),   q.stride(2),
             k.stride(2), v.stride(2), static_cast<float>(1.0 / std::sqrt(static_cast<double>(q.size(3))))};
  const int64_t block = std::min(kQueryBlock, g.queries);
  const int64_t lastRows = g.queries - (g.queries - 1) / block * block;
  const Products full = productsFor(g, block);
  const Products last = productsFor(g, lastRows);
  if (!full.scores || !full.values || !last.scores || !last.values) return {};

  at::Tensor out = at::empty({batch, g.queries, g.heads, g.depth}, q.options());
  at::Tensor scores = at::empty({block, g.keys}, q.options().dtype(at::kFloat));
  at::Tensor probabilities = at::empty({block, g.keys}, q.options());
  at::Tensor sums = at::empty({block}, q.options().dtype(at::kFloat));
  at::Tensor accumulated = at::empty({block, g.depth}, q.options().dtype(at::kFloat));
  float* scoreData = scores.data_ptr<float>();
  auto* probabilityData = static_cast<std::uint16_t*>(probabilities.data_ptr());
  float* sumData = sums.data_ptr<float>();
  float* accumulatedData = accumulated.data_ptr<float>();
  auto* outData = static_cast<std::uint16_t*>(out.data_ptr());

  const dnnl::engine& engine = oneDnnEngine();
  dnnl::stream stream(engine);
  const int64_t group = g.heads / g.kvHeads;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < g.heads; ++h) {
      const int64_t kvh = h / group;
      for (int64_t start = 0; start < g.queries; start += block) {
        const int64_t rows = std::min(block, g.queries - start);
        const Products& products = rows == block ? full : last;
        const Memory qMemory(queryRows(g, rows), engine, address(q, b, h, start));
        const Memory kMemory(keysTransposed(g), engine, address(k, b, kvh, 0));
        const Memory scoreMemory(scoreRows(g, rows), engine, scoreData);
        products.scores->execute(
            stream, {{DNNL_ARG_SRC, qMemory}, {DNNL_ARG_WEIGHTS, kMemory}, {DNNL_ARG_DST, scoreMemory}});
        stream.wait();
        at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r)
            sumData[r] = expRowToBf16(scoreData + r * g.keys, probabilityData + r * g.keys, g.keys, g.scale);
        });
        const Memory pMemory(probabilityRows(g, rows), engine, probabilityData);
        const Memory vMemory(values(g), engine, address(v, b, kvh, 0));
        const Memory outMemory(outputRows(g, rows), engine, accumulatedData);
        products.values->execute(
            stream, {{DNNL_ARG_SRC, pMemory}, {DNNL_ARG_WEIGHTS, vMemory}, {DNNL_ARG_DST, outMemory}});
        stream.wait();
        std::uint16_t* target = outData + ((b * g.queries + start) * g.heads + h) * g.depth;
        for (int64_t r = 0; r < rows; ++r)
          normaliseRowToBf16(accumulatedData + r * g.depth, sumData[r], target + r * g.heads * g.depth,
                             g.depth);
      }
    }
  }
  return out.permute({0, 2, 1, 3});
}

#else

at::Tensor oneDnnAttention(const at::Tensor&, const at::Tensor&, const at::Tensor&) {
  return {};
}

#endif

}  // namespace sapiens::detail
