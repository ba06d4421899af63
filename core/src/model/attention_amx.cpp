#include "attention_amx.h"

#include "attention_onednn.h"
#include "kernel_switch.h"

#include "sapiens/common/cpu_features.h"
#include "sapiens/common/log.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__)
#include "softmax_rows_bf16.h"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define SAPIENS_AMX_KERNEL 1
#define SAPIENS_AMX_BF16 \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512dq,avx512bw,avx512vl,avx512bf16,avx2,fma")))
#endif

namespace sapiens::detail {

namespace {

#ifdef SAPIENS_AMX_KERNEL
// Linux gives the 8 KiB tile state only to a process that asks for it (arch_prctl ARCH_REQ_XCOMP_PERM
// for XFEATURE_XTILEDATA, Linux >= 5.16); a tile instruction before that is SIGILL.
bool tilesGranted() {
  constexpr long kRequestPermission = 0x1023;
  constexpr long kTileData = 18;
  return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
}
#endif

bool switchedOn() {
  static const bool on = [] {
#ifdef SAPIENS_AMX_KERNEL
    const bool off = switchedOffByEnvironment("SAPIENS_AMX_ATTENTION");
    const bool used = !off && cpu::hasAmxBf16() && cpu::hasAvx512Bf16() && tilesGranted();
    logger().debug("bf16 attention on AMX tiles: {}", used ? "yes" : "no");
    return used;
#else
    return false;
#endif
  }();
  return on;
}

}  // namespace

bool amxAttentionApplies(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return bf16AttentionOperands(q, k, v) && q.size(3) % 2 == 0 && switchedOn();
}

#ifdef SAPIENS_AMX_KERNEL

namespace {

// Every tile is 16 rows of 64 bytes: 16 x 32 bf16 operands (b's rows hold pairs of k-rows interleaved)
// or 16 x 16 float32 sums.
constexpr int64_t kRows = 16;
constexpr int64_t kTileElements = 16 * 32;

struct Layout {
  int64_t depth;        // d
  int64_t depthChunks;  // ceil(d / 32): the steps of the score product
  int64_t outChunks;    // ceil(d / 16): the output's tiles of 16 columns
  int64_t keys;
  int64_t paddedKeys;  // a multiple of 32: two score tiles at a time
  float scale;

  int64_t packedKeysSize() const { return paddedKeys / 16 * depthChunks * kTileElements; }
  int64_t packedValuesSize() const { return paddedKeys / 32 * outChunks * kTileElements; }
};

Layout layoutFor(const at::Tensor& q, const at::Tensor& k) {
  const int64_t depth = q.size(3), keys = k.size(2);
  return {depth, (depth + 31) / 32,     (depth + 15) / 16,
          keys,  (keys + 31) / 32 * 32, static_cast<float>(1.0 / std::sqrt(static_cast<double>(depth)))};
}

// The tile loads are asm statements that name no memory: what plain stores wrote before them must be
// in memory first.
inline void memoryBarrier() {
  __asm__ volatile("" ::: "memory");
}

struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t startRow = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t bytesPerRow[16] = {};
  std::uint8_t rows[16] = {};
};

SAPIENS_AMX_BF16 void configureTiles() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.bytesPerRow[t] = 64;
    config.rows[t] = kRows;
  }
  memoryBarrier();
  _tile_loadconfig(&config);
}

SAPIENS_AMX_BF16 void releaseTiles() {
  _tile_release();
}

std::uint32_t pairAt(const std::uint16_t* p) {
  std::uint32_t pair;
  std::memcpy(&pair, p, sizeof pair);
  return pair;
}

// k's rows as the b operand of q k^T: tile (key chunk j, depth chunk c) holds in row r, column col the
// pair k[16 j + col][32 c + 2 r, + 1]; zeros beyond the keys and the depth.
void packKeys(const std::uint16_t* k, int64_t rowStride, const Layout& l, std::uint16_t* out) {
  std::fill(out, out + l.packedKeysSize(), std::uint16_t{0});
  auto* pairs = reinterpret_cast<std::uint32_t*>(out);
  for (int64_t key = 0; key < l.keys; ++key) {
    const std::uint16_t* row = k + key * rowStride;
    std::uint32_t* chunk = pairs + key / 16 * l.depthChunks * (kTileElements / 2) + key % 16;
    for (int64_t p = 0; p < l.depth / 2; ++p)
      chunk[p / 16 * (kTileElements / 2) + p % 16 * 16] = pairAt(row + 2 * p);
  }
}

// v as the b operand of p v: tile (key chunk j of 32, column chunk c of 16) holds in row r, column col
// the pair v[32 j + 2 r, + 1][16 c + col]; zeros beyond the keys and the depth.
void packValues(const std::uint16_t* v, int64_t rowStride, const Layout& l, std::uint16_t* out) {
  std::fill(out, out + l.packedValuesSize(), std::uint16_t{0});
  for (int64_t key = 0; key < l.keys; ++key) {
    const std::uint16_t* row = v + key * rowStride;
    std::uint16_t* chunk = out + key / 32 * l.outChunks * kTileElements + key % 32 / 2 * 32 + key % 2;
    for (int64_t d = 0; d < l.depth; ++d) chunk[d / 16 * kTileElements + d % 16 * 2] = row[d];
  }
}

// A block of queries is two tiles' rows: every key or value tile loaded (from L2: 0.4 MB each per head
// at 3081 keys) serves both, which halves what the products read per query.
constexpr int64_t kBlockRows = 2 * kRows;

// The keys are taken 128 at a time with a running maximum per row (the online softmax of the float32
// tiled kernel): a chunk's scores (16 KB) and probabilities (8 KB) stay in L1 instead of rows of all
// keys going through L2 three times.
constexpr int64_t kChunkKeys = 128;

// scoreChunk for a depth of two chunks (33-64): the query's four tiles (upper and lower rows, two depth
// chunks) stay in tiles 2-5 for the whole chunk of keys, 16 keys at a time in tiles 6 and 7 summed into
// 0 and 1: half the tile loads of the general form, 3 % of an attention layer of the 0.4b.
SAPIENS_AMX_BF16 void scoreChunkTwoDepthChunks(const std::uint16_t* query, const std::uint16_t* keys,
                                               int64_t pairs, float* scores) {
  const int64_t queryStride = 2 * 64, scoreStride = kChunkKeys * 4;
  const std::uint16_t* lowerQuery = query + kRows * 2 * 32;
  float* lowerScores = scores + kRows * kChunkKeys;
  _tile_loadd(2, query, queryStride);
  _tile_loadd(3, query + 32, queryStride);
  _tile_loadd(4, lowerQuery, queryStride);
  _tile_loadd(5, lowerQuery + 32, queryStride);
  for (int64_t j = 0; j < 2 * pairs; ++j) {
    const std::uint16_t* b = keys + j * 2 * kTileElements;
    _tile_zero(0);
    _tile_zero(1);
    _tile_loadd(6, b, 64);
    _tile_loadd(7, b + kTileElements, 64);
    _tile_dpbf16ps(0, 2, 6);
    _tile_dpbf16ps(1, 4, 6);
    _tile_dpbf16ps(0, 3, 7);
    _tile_dpbf16ps(1, 5, 7);
    _tile_stored(0, scores + j * 16, scoreStride);
    _tile_stored(1, lowerScores + j * 16, scoreStride);
  }
}

// scores (32 x 32 pairs float32, row stride kChunkKeys) = query (32 x 32 depthChunks bf16) k^T for the
// keys from `keys` on, 32 at a time: tiles 4 and 5 hold the query's upper and lower 16 rows, 6 and 7 two
// chunks of 16 keys, 0-3 their four sums.
SAPIENS_AMX_BF16 void scoreChunk(const std::uint16_t* query, const std::uint16_t* keys, const Layout& l,
                                 int64_t pairs, float* scores) {
  memoryBarrier();
  if (l.depthChunks == 2) return scoreChunkTwoDepthChunks(query, keys, pairs, scores);
  const int64_t queryStride = l.depthChunks * 64, scoreStride = kChunkKeys * 4;
  const int64_t nextKeys = l.depthChunks * kTileElements;
  const std::uint16_t* lowerQuery = query + kRows * l.depthChunks * 32;
  float* lowerScores = scores + kRows * kChunkKeys;
  for (int64_t pair = 0; pair < pairs; ++pair) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (int64_t c = 0; c < l.depthChunks; ++c) {
      const std::uint16_t* b = keys + (pair * 2 * l.depthChunks + c) * kTileElements;
      _tile_loadd(4, query + c * 32, queryStride);
      _tile_loadd(6, b, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_loadd(7, b + nextKeys, 64);
      _tile_dpbf16ps(1, 4, 7);
      _tile_loadd(5, lowerQuery + c * 32, queryStride);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, scores + pair * 32, scoreStride);
    _tile_stored(1, scores + pair * 32 + 16, scoreStride);
    _tile_stored(2, lowerScores + pair * 32, scoreStride);
    _tile_stored(3, lowerScores + pair * 32 + 16, scoreStride);
  }
}

// output[:, 16 first, 16 (first + kTiles)) += probabilities (32 x 32 pairs bf16, row stride kChunkKeys)
// v for the values from `values` on, kTiles 1 or 2: tiles 4 and 5 hold 32 keys' probabilities of the
// upper and lower rows, 6 and 7 the values, 0-3 the output's sums.
template <int kTiles>
SAPIENS_AMX_BF16 void addValueTiles(const std::uint16_t* probabilities, const std::uint16_t* values,
                                    const Layout& l, int64_t pairs, int64_t first, float* output) {
  memoryBarrier();
  const int64_t probabilityStride = kChunkKeys * 2, outputStride = l.outChunks * 64;
  const std::uint16_t* lowerProbabilities = probabilities + kRows * kChunkKeys;
  float* out = output + first * 16;
  float* lowerOut = out + kRows * l.outChunks * 16;
  _tile_loadd(0, out, outputStride);
  _tile_loadd(2, lowerOut, outputStride);
  if constexpr (kTiles > 1) {
    _tile_loadd(1, out + 16, outputStride);
    _tile_loadd(3, lowerOut + 16, outputStride);
  }
  for (int64_t j = 0; j < pairs; ++j) {
    const std::uint16_t* b = values + (j * l.outChunks + first) * kTileElements;
    _tile_loadd(4, probabilities + j * 32, probabilityStride);
    _tile_loadd(6, b, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_loadd(5, lowerProbabilities + j * 32, probabilityStride);
    _tile_dpbf16ps(2, 5, 6);
    if constexpr (kTiles > 1) {
      _tile_loadd(7, b + kTileElements, 64);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
    }
  }
  _tile_stored(0, out, outputStride);
  _tile_stored(2, lowerOut, outputStride);
  if constexpr (kTiles > 1) {
    _tile_stored(1, out + 16, outputStride);
    _tile_stored(3, lowerOut + 16, outputStride);
  }
}

SAPIENS_AMX_BF16 void addValueChunk(const std::uint16_t* probabilities, const std::uint16_t* values,
                                    const Layout& l, int64_t pairs, float* output) {
  for (int64_t first = 0; first < l.outChunks; first += 2) {
    if (l.outChunks - first >= 2)
      addValueTiles<2>(probabilities, values, l, pairs, first, output);
    else
      addValueTiles<1>(probabilities, values, l, pairs, first, output);
  }
}

// One thread's buffers for a block of 32 queries.
struct BlockBuffers {
  explicit BlockBuffers(const Layout& l)
      : query(kBlockRows * l.depthChunks * 32, 0),
        scores(kBlockRows * kChunkKeys),
        probabilities(kBlockRows * kChunkKeys, 0),
        output(kBlockRows * l.outChunks * 16) {}
  std::vector<std::uint16_t> query;
  std::vector<float> scores;
  std::vector<std::uint16_t> probabilities;
  std::vector<float> output;  // float32 sums of probabilities x values, at the rows' current maxima
  float maxima[kBlockRows] = {};
  float sums[kBlockRows] = {};
};

struct Operand {
  const std::uint16_t* data;
  int64_t batchStride, headStride, rowStride;
  explicit Operand(const at::Tensor& t)
      : data(static_cast<const std::uint16_t*>(t.data_ptr())),
        batchStride(t.stride(0)),
        headStride(t.stride(1)),
        rowStride(t.stride(2)) {}
  const std::uint16_t* row(int64_t b, int64_t h, int64_t token) const {
    return data + b * batchStride + h * headStride + token * rowStride;
  }
};

// The query rows [0, rows) of `buffers` against keys [first, first + count): the chunk's probabilities,
// each row's output and sum first rescaled to the maximum the chunk may raise.
SAPIENS_AMX_BF16 void softmaxChunk(BlockBuffers& buffers, const Layout& l, int64_t rows, int64_t count,
                                   int64_t paddedCount) {
  const int64_t width = l.outChunks * 16;
  float chunkMaxima[kBlockRows];
  rowMaxima(buffers.scores.data(), kChunkKeys, rows, count, chunkMaxima);
  for (int64_t r = 0; r < rows; ++r) {
    const float* scores = buffers.scores.data() + r * kChunkKeys;
    std::uint16_t* p = buffers.probabilities.data() + r * kChunkKeys;
    const float maximum = std::max(buffers.maxima[r], chunkMaxima[r]);
    if (maximum > buffers.maxima[r]) {
      const float factor = std::exp((buffers.maxima[r] - maximum) * l.scale);  // 0 on the first chunk
      float* output = buffers.output.data() + r * width;
      for (int64_t j = 0; j < width; ++j) output[j] *= factor;
      buffers.sums[r] *= factor;
      buffers.maxima[r] = maximum;
    }
    buffers.sums[r] += expShiftedRowToBf16(scores, p, count, l.scale, maximum);
    std::fill(p + count, p + paddedCount, std::uint16_t{0});
  }
}

// Rows [start, start + rows) of query head h: out[b, start + r, h, :] for r < rows (<= 32).
SAPIENS_AMX_BF16 void attendBlock(const Operand& q, int64_t b, int64_t h, int64_t start, int64_t rows,
                                  const std::uint16_t* keys, const std::uint16_t* values, const Layout& l,
                                  BlockBuffers& buffers, std::uint16_t* out, int64_t outRowStride) {
  const int64_t queryWidth = l.depthChunks * 32;
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(buffers.query.data() + r * queryWidth, q.row(b, h, start + r), l.depth * 2);
  for (int64_t r = rows; r < kBlockRows; ++r) {
    std::fill_n(buffers.query.data() + r * queryWidth, queryWidth, std::uint16_t{0});
    std::fill_n(buffers.probabilities.data() + r * kChunkKeys, kChunkKeys, std::uint16_t{0});
  }
  std::fill(buffers.output.begin(), buffers.output.end(), 0.0f);
  std::fill_n(buffers.maxima, kBlockRows, -std::numeric_limits<float>::infinity());
  std::fill_n(buffers.sums, kBlockRows, 0.0f);
  for (int64_t first = 0; first < l.keys; first += kChunkKeys) {
    const int64_t count = std::min(kChunkKeys, l.keys - first), pairs = (count + 31) / 32;
    scoreChunk(buffers.query.data(), keys + first / 16 * l.depthChunks * kTileElements, l, pairs,
               buffers.scores.data());
    softmaxChunk(buffers, l, rows, count, pairs * 32);
    addValueChunk(buffers.probabilities.data(), values + first / 32 * l.outChunks * kTileElements, l, pairs,
                  buffers.output.data());
  }
  for (int64_t r = 0; r < rows; ++r)
    normaliseRowToBf16(buffers.output.data() + r * l.outChunks * 16, buffers.sums[r],
                       out + (start + r) * outRowStride, l.depth);
}

}  // namespace

at::Tensor amxAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  TORCH_CHECK(amxAttentionApplies(q, k, v), "amxAttention: unsupported tensors or CPU");
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), kvHeads = k.size(1);
  const Layout l = layoutFor(q, k);
  const Operand keysIn(k), valuesIn(v), queriesIn(q);

  // Keys and values of every (sample, kv head) in tile form: 0.8 MB per head at 3081 keys of 64.
  const int64_t pairs = batch * kvHeads;
  const at::Tensor packed = at::empty({pairs * (l.packedKeysSize() + l.packedValuesSize())}, at::kShort);
  auto* keys = static_cast<std::uint16_t*>(packed.data_ptr());
  std::uint16_t* values = keys + pairs * l.packedKeysSize();
  at::parallel_for(0, pairs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / kvHeads, h = i % kvHeads;
      packKeys(keysIn.row(b, h, 0), keysIn.rowStride, l, keys + i * l.packedKeysSize());
      packValues(valuesIn.row(b, h, 0), valuesIn.rowStride, l, values + i * l.packedValuesSize());
    }
  });

  at::Tensor out = at::empty({batch, queries, heads, l.depth}, q.options());
  auto* outData = static_cast<std::uint16_t*>(out.data_ptr());
  const int64_t blocks = (queries + kBlockRows - 1) / kBlockRows, group = heads / kvHeads;
  at::parallel_for(0, batch * heads * blocks, 1, [&](int64_t begin, int64_t end) {
    configureTiles();
    BlockBuffers buffers(l);
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / (heads * blocks), h = i / blocks % heads, start = i % blocks * kBlockRows;
      const int64_t pair = b * kvHeads + h / group;
      attendBlock(queriesIn, b, h, start, std::min(kBlockRows, queries - start),
                  keys + pair * l.packedKeysSize(), values + pair * l.packedValuesSize(), l, buffers,
                  outData + (b * queries * heads + h) * l.depth, heads * l.depth);
    }
    releaseTiles();
  });
  return out.permute({0, 2, 1, 3});
}

#else

at::Tensor amxAttention(const at::Tensor&, const at::Tensor&, const at::Tensor&) {
  return {};
}

#endif

}  // namespace sapiens::detail
