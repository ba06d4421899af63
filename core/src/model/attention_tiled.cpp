#include "attention_tiled.h"

#include "exp_vector.h"
#include "vector_lanes.h"

#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

// GCC 12 reports the deliberately undefined pass-through operand inside its AVX-512 intrinsics
// (_mm512_undefined_ps) as maybe-uninitialized once they are inlined.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace sapiens::detail {

namespace {

#define SAPIENS_AVX512 __attribute__((target("avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")))

constexpr int64_t kLanes = 16;
constexpr int64_t kPanelKeys = 64;   // keys per packed K^T panel: four vectors of scores
constexpr int64_t kKeyBlock = 256;   // keys whose scores are live at once (multiple of kPanelKeys)
constexpr int64_t kQueryBlock = 96;  // queries sharing one pass over K and V (multiple of kRowPadding)
constexpr int64_t kRowPadding = 12;  // row tiles are 6 or 4 rows
constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

int64_t roundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using FloatBuffer = std::unique_ptr<float[], FreeDeleter>;

FloatBuffer allocateFloats(int64_t count) {
  const auto bytes = static_cast<std::size_t>(roundUp(std::max<int64_t>(count, 1) * 4, 64));
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (!p) throw std::bad_alloc();
  return FloatBuffer(p);
}

// s[r][0..64) = scale * sum_d q[r][d] * panel[d][0..64) for six query rows (stride `depth`); s has rows
// of kKeyBlock. The scale multiplies the finished sum, as a GEMM's alpha does.
SAPIENS_AVX512 void scoreTile(const float* q, int64_t depth, const float* panel, float scale, float* s) {
  constexpr int kRows = 6;
  __m512 acc[kRows][4];
  for (auto& row : acc)
    for (auto& a : row) a = _mm512_setzero_ps();
  for (int64_t d = 0; d < depth; ++d) {
    const float* keys = panel + d * kPanelKeys;
    const __m512 k0 = _mm512_loadu_ps(keys);
    const __m512 k1 = _mm512_loadu_ps(keys + 16);
    const __m512 k2 = _mm512_loadu_ps(keys + 32);
    const __m512 k3 = _mm512_loadu_ps(keys + 48);
    for (int r = 0; r < kRows; ++r) {
      const __m512 qv = _mm512_set1_ps(q[r * depth + d]);
      acc[r][0] = _mm512_fmadd_ps(qv, k0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(qv, k1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(qv, k2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(qv, k3, acc[r][3]);
    }
  }
  const __m512 sv = _mm512_set1_ps(scale);
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < 4; ++c)
      _mm512_storeu_ps(s + r * kKeyBlock + c * kLanes, _mm512_mul_ps(acc[r][c], sv));
}

// o[r][0..16*NV) += sum_j p[r][j] * v[j][0..16*NV) for kRows rows; p has rows of kKeyBlock, v and o rows
// of `stride` floats.
template <int kRows, int NV>
SAPIENS_AVX512 void valueTile(const float* p, const float* v, int64_t stride, int64_t keys, float* o) {
  __m512 acc[kRows][NV];
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_loadu_ps(o + r * stride + c * kLanes);
  for (int64_t j = 0; j < keys; ++j) {
    __m512 values[NV];
    for (int c = 0; c < NV; ++c) values[c] = _mm512_loadu_ps(v + j * stride + c * kLanes);
    for (int r = 0; r < kRows; ++r) {
      const __m512 pv = _mm512_set1_ps(p[r * kKeyBlock + j]);
      for (int c = 0; c < NV; ++c) acc[r][c] = _mm512_fmadd_ps(pv, values[c], acc[r][c]);
    }
  }
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < NV; ++c) _mm512_storeu_ps(o + r * stride + c * kLanes, acc[r][c]);
}

// o (rows x stride) += p (rows x keys) v (keys x stride), stride = 16 * vectors.
SAPIENS_AVX512 void accumulateValues(const float* p, const float* v, int64_t stride, int64_t keys,
                                     int64_t rows, float* o) {
  const int64_t vectors = stride / kLanes;
  if (vectors == 5) {  // d = 80 (0.8b) or 76 padded (5b): 20 accumulators
    for (int64_t r = 0; r < rows; r += 4) valueTile<4, 5>(p + r * kKeyBlock, v, stride, keys, o + r * stride);
    return;
  }
  for (int64_t c = 0; c < vectors; c += 4) {
    const int64_t strip = std::min<int64_t>(4, vectors - c);
    const float* vc = v + c * kLanes;
    for (int64_t r = 0; r < rows; r += 6) {
      const float* pr = p + r * kKeyBlock;
      float* oc = o + r * stride + c * kLanes;
      switch (strip) {
        case 4:
          valueTile<6, 4>(pr, vc, stride, keys, oc);
          break;
        case 3:
          valueTile<6, 3>(pr, vc, stride, keys, oc);
          break;
        case 2:
          valueTile<6, 2>(pr, vc, stride, keys, oc);
          break;
        default:
          valueTile<6, 1>(pr, vc, stride, keys, oc);
          break;
      }
    }
  }
}

SAPIENS_AVX512 float rowMax(const float* s, int64_t n) {
  __m512 m = _mm512_set1_ps(kNegativeInfinity);
  for (int64_t j = 0; j < n; j += kLanes)
    m = _mm512_max_ps(m, _mm512_mask_loadu_ps(_mm512_set1_ps(kNegativeInfinity), tailMask16(n - j), s + j));
  return _mm512_reduce_max_ps(m);
}

// s[j] = exp(s[j] - shift) for j < n and 0 up to nPadded; returns the sum.
SAPIENS_AVX512 float expShifted(float* s, int64_t n, int64_t nPadded, float shift) {
  const __m512 sh = _mm512_set1_ps(shift);
  __m512 sum = _mm512_setzero_ps();
  int64_t j = 0;
  for (; j < n; j += kLanes) {
    const __mmask16 mask = tailMask16(n - j);
    const __m512 e = _mm512_maskz_mov_ps(mask, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, s + j), sh)));
    _mm512_storeu_ps(s + j, e);
    sum = _mm512_add_ps(sum, e);
  }
  for (; j < nPadded; j += kLanes) _mm512_storeu_ps(s + j, _mm512_setzero_ps());
  return _mm512_reduce_add_ps(sum);
}

SAPIENS_AVX512 void scaleRow(float* o, int64_t n, float factor) {
  const __m512 f = _mm512_set1_ps(factor);
  for (int64_t j = 0; j < n; j += kLanes) _mm512_storeu_ps(o + j, _mm512_mul_ps(_mm512_loadu_ps(o + j), f));
}

struct Geometry {
  int64_t batch, heads, kvHeads, queries, keys, depth;
  int64_t depthPadded;  // rows of V and O: whole vectors
  int64_t keyPanels;
};

// One thread's working set for one (sample, head): K^T in panels of 64 keys, V with rows padded to
// whole vectors, and one block of queries with its scores, output rows and softmax state.
struct Workspace {
  explicit Workspace(const Geometry& g)
      : keysT(allocateFloats(g.keyPanels * g.depth * kPanelKeys)),
        values(allocateFloats(g.keyPanels * kPanelKeys * g.depthPadded)),
        queries(allocateFloats(kQueryBlock * g.depth)),
        scores(allocateFloats(kQueryBlock * kKeyBlock)),
        output(allocateFloats(kQueryBlock * g.depthPadded)),
        maxima(allocateFloats(kQueryBlock)),
        sums(allocateFloats(kQueryBlock)) {}
  FloatBuffer keysT, values, queries, scores, output, maxima, sums;
};

void packKeysAndValues(const Geometry& g, const float* k, int64_t kStride, const float* v, int64_t vStride,
                       Workspace& w) {
  const int64_t paddedKeys = g.keyPanels * kPanelKeys;
  for (int64_t panel = 0; panel < g.keyPanels; ++panel) {
    float* out = w.keysT.get() + panel * g.depth * kPanelKeys;
    for (int64_t j = 0; j < kPanelKeys; ++j) {
      const int64_t key = panel * kPanelKeys + j;
      if (key < g.keys) {
        const float* row = k + key * kStride;
        for (int64_t d = 0; d < g.depth; ++d) out[d * kPanelKeys + j] = row[d];
      } else {
        for (int64_t d = 0; d < g.depth; ++d) out[d * kPanelKeys + j] = 0.0f;
      }
    }
  }
  for (int64_t key = 0; key < paddedKeys; ++key) {
    float* out = w.values.get() + key * g.depthPadded;
    const int64_t copied = key < g.keys ? g.depth : 0;
    if (copied) std::memcpy(out, v + key * vStride, static_cast<std::size_t>(copied) * sizeof(float));
    std::fill(out + copied, out + g.depthPadded, 0.0f);
  }
}

SAPIENS_AVX512 void attendQueryBlock(const Geometry& g, const float* q, int64_t qStride, int64_t rows,
                                     float scale, Workspace& w, float* out, int64_t outStride) {
  const int64_t rowsPadded = roundUp(rows, kRowPadding);
  float* qb = w.queries.get();
  for (int64_t r = 0; r < rowsPadded; ++r) {
    if (r < rows)
      std::memcpy(qb + r * g.depth, q + r * qStride, static_cast<std::size_t>(g.depth) * sizeof(float));
    else
      std::fill(qb + r * g.depth, qb + (r + 1) * g.depth, 0.0f);
  }
  float* o = w.output.get();
  float* m = w.maxima.get();
  float* l = w.sums.get();
  std::fill(o, o + rowsPadded * g.depthPadded, 0.0f);
  std::fill(m, m + rowsPadded, kNegativeInfinity);
  std::fill(l, l + rowsPadded, 0.0f);
  float* s = w.scores.get();

  for (int64_t k0 = 0; k0 < g.keys; k0 += kKeyBlock) {
    const int64_t n = std::min(kKeyBlock, g.keys - k0);
    const int64_t panels = (n + kPanelKeys - 1) / kPanelKeys;
    const float* firstPanel = w.keysT.get() + (k0 / kPanelKeys) * g.depth * kPanelKeys;
    for (int64_t p = 0; p < panels; ++p)  // each panel stays in L1 for all row tiles
      for (int64_t r = 0; r < rowsPadded; r += 6)
        scoreTile(qb + r * g.depth, g.depth, firstPanel + p * g.depth * kPanelKeys, scale,
                  s + r * kKeyBlock + p * kPanelKeys);
    for (int64_t r = 0; r < rowsPadded; ++r) {
      float* row = s + r * kKeyBlock;
      const float newMax = std::max(m[r], rowMax(row, n));
      const float sum = expShifted(row, n, panels * kPanelKeys, newMax);
      if (m[r] != kNegativeInfinity && newMax != m[r]) {
        const float factor = std::exp(m[r] - newMax);
        l[r] *= factor;
        scaleRow(o + r * g.depthPadded, g.depthPadded, factor);
      }
      l[r] += sum;
      m[r] = newMax;
    }
    for (int64_t p = 0; p < panels; ++p)  // 64 keys' values stay in L1 for all row tiles
      accumulateValues(s + p * kPanelKeys, w.values.get() + (k0 + p * kPanelKeys) * g.depthPadded,
                       g.depthPadded, kPanelKeys, rowsPadded, o);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* from = o + r * g.depthPadded;
    float* to = out + r * outStride;
    for (int64_t d = 0; d < g.depth; ++d) to[d] = from[d] / l[r];
  }
}

bool fits(const at::Tensor& t) {
  return t.defined() && t.is_cpu() && t.scalar_type() == at::kFloat && t.dim() == 4 && t.stride(3) == 1 &&
         !t.is_conj() && !t.is_neg();
}

}  // namespace

bool tiledAttentionApplies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  if (!cpu::hasAvx512() || !fits(q) || !fits(k) || !fits(v)) return false;
  if (c10::GradMode::is_enabled() && (q.requires_grad() || k.requires_grad() || v.requires_grad()))
    return false;
  const int64_t depth = q.size(3);
  return depth > 0 && k.size(3) == depth && v.size(3) == depth && k.size(0) == q.size(0) &&
         v.size(0) == q.size(0) && k.size(1) == v.size(1) && k.size(1) > 0 && q.size(1) % k.size(1) == 0 &&
         k.size(2) == v.size(2) && k.size(2) > 0;
}

at::Tensor tiledAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  TORCH_CHECK(tiledAttentionApplies(q, k, v), "tiledAttention: unsupported tensors or CPU");
  Geometry g{};
  g.batch = q.size(0);
  g.heads = q.size(1);
  g.kvHeads = k.size(1);
  g.queries = q.size(2);
  g.keys = k.size(2);
  g.depth = q.size(3);
  g.depthPadded = roundUp(g.depth, kLanes);
  g.keyPanels = (g.keys + kPanelKeys - 1) / kPanelKeys;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.depth)));
  at::Tensor out = at::empty({g.batch, g.queries, g.heads, g.depth}, q.options());
  if (g.queries == 0) return out.permute({0, 2, 1, 3});

  const float* qData = q.data_ptr<float>();
  const float* kData = k.data_ptr<float>();
  const float* vData = v.data_ptr<float>();
  float* outData = out.data_ptr<float>();
  const int64_t groupSize = g.heads / g.kvHeads;
  const int64_t outStride = g.heads * g.depth;
  at::parallel_for(0, g.batch * g.heads, 1, [&](int64_t begin, int64_t end) {
    Workspace w(g);
    for (int64_t item = begin; item < end; ++item) {
      const int64_t b = item / g.heads;
      const int64_t h = item % g.heads;
      const int64_t kvh = h / groupSize;
      packKeysAndValues(g, kData + b * k.stride(0) + kvh * k.stride(1), k.stride(2),
                        vData + b * v.stride(0) + kvh * v.stride(1), v.stride(2), w);
      const float* qh = qData + b * q.stride(0) + h * q.stride(1);
      float* oh = outData + (b * g.queries * g.heads + h) * g.depth;
      for (int64_t q0 = 0; q0 < g.queries; q0 += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, g.queries - q0);
        attendQueryBlock(g, qh + q0 * q.stride(2), q.stride(2), rows, scale, w, oh + q0 * outStride,
                         outStride);
      }
    }
  });
  return out.permute({0, 2, 1, 3});
}

}  // namespace sapiens::detail
