#include "rope.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/BFloat16.h>

#include <algorithm>
#include <deque>
#include <mutex>

namespace sapiens::detail {
namespace {

RopeTables computeRopeTables(const at::Tensor& periods, std::int64_t gridH, std::int64_t gridW,
                             RopePrecision precision) {
  const bool bf16 = precision == RopePrecision::BFloat16;
  const at::ScalarType dtype = bf16 ? at::kBFloat16 : at::kFloat;
  // The official op sequence on bf16 tensors, written as float arithmetic with an explicit rounding to
  // the rope dtype after every op. Run on bf16 tensors directly, the result depends on the LibTorch
  // version and device: the reference's (and LibTorch 1.13's CPU kernels) round the scalar 2*pi to bf16
  // (6.28125) before multiplying, while LibTorch 2.x and every CUDA kernel keep it in float, which moves
  // some angles by one bf16 step and sin/cos by up to 0.03. Computed on the CPU, then copied: the tables
  // are small (tokens x head_dim) and bit-identical on every device and version.
  const auto rounded = [&](const at::Tensor& t) { return bf16 ? t.to(at::kBFloat16).to(at::kFloat) : t; };
  const auto cpuFloat = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor p = rounded(periods.to(at::kCPU).to(at::kFloat));
  const auto axis = [&](std::int64_t n) {
    const at::Tensor centres = rounded(at::arange(0.5, static_cast<double>(n), 1.0, cpuFloat));
    return rounded(centres.div(static_cast<double>(n)));
  };
  const std::vector<at::Tensor> grid = at::meshgrid({axis(gridH), axis(gridW)}, "ij");
  at::Tensor coords = at::stack({grid[0], grid[1]}, -1).flatten(0, 1);  // (HW, 2): [y, x]
  coords = rounded(rounded(coords.mul(2.0)).sub(1.0));
  const double twoPi = 6.283185307179586;  // Python's 2 * math.pi, one scalar
  const double scale =
      bf16 ? static_cast<double>(static_cast<float>(c10::BFloat16(static_cast<float>(twoPi)))) : twoPi;
  at::Tensor angles =
      rounded(rounded(coords.unsqueeze(-1).mul(scale)).div(p.view({1, 1, -1})));  // (HW, 2, d/4)
  angles = at::tile(angles.flatten(1, 2), {2});                                   // (HW, d)
  const auto table = [&](const at::Tensor& t) { return t.to(dtype).to(periods.device()); };
  return {table(at::sin(angles)), table(at::cos(angles))};
}

// Every frame of a video, and every image of one size, needs the same tables; computing them costs
// about as much as a small model's forward pass on a GPU. An entry holds its periods tensor, so the
// identity test below cannot be fooled by a freed model's memory being reused.
struct CachedTables {
  at::Tensor periods;
  std::int64_t version;
  std::int64_t gridH;
  std::int64_t gridW;
  RopePrecision precision;
  RopeTables tables;
};
constexpr std::size_t kCachedTables = 8;
std::mutex cacheMutex;
std::deque<CachedTables> cache;  // most recently used first

}  // namespace

RopeTables ropeTables(const at::Tensor& periods, std::int64_t gridH, std::int64_t gridW,
                      RopePrecision precision) {
  const std::int64_t version =
      periods.is_inference() ? 0 : periods._version();  // inference tensors have none
  const auto matches = [&](const CachedTables& e) {
    return e.periods.unsafeGetTensorImpl() == periods.unsafeGetTensorImpl() && e.version == version &&
           e.gridH == gridH && e.gridW == gridW && e.precision == precision;
  };
  {
    const std::lock_guard<std::mutex> lock(cacheMutex);
    const auto hit = std::find_if(cache.begin(), cache.end(), matches);
    if (hit != cache.end()) {
      CachedTables entry = std::move(*hit);
      cache.erase(hit);
      cache.push_front(std::move(entry));
      return cache.front().tables;
    }
  }
  RopeTables tables;
  {
    // Ordinary tensors even when called in inference mode, so that a later pass with autograd can use them.
    const c10::InferenceMode normalTensors(false);
    tables = computeRopeTables(periods, gridH, gridW, precision);
  }
  const std::lock_guard<std::mutex> lock(cacheMutex);
  cache.push_front({periods, version, gridH, gridW, precision, tables});
  if (cache.size() > kCachedTables) cache.pop_back();
  return tables;
}

at::Tensor applyRope(const at::Tensor& x, const RopeTables& tables) {
  const at::ScalarType original = x.scalar_type();
  const at::Tensor xr = x.to(tables.sin.scalar_type());
  const int64_t tokens = xr.size(-2);
  const int64_t rotatedTokens = tables.sin.size(0);
  const int64_t prefix = tokens - rotatedTokens;
  const at::Tensor head = xr.narrow(-2, 0, prefix);
  const at::Tensor body = xr.narrow(-2, prefix, rotatedTokens);
  const std::vector<at::Tensor> halves = body.chunk(2, -1);
  const at::Tensor rotatedHalf = at::cat({halves[1].neg(), halves[0]}, -1);
  const at::Tensor rotated = body.mul(tables.cos).add(rotatedHalf.mul(tables.sin));
  return at::cat({head, rotated}, -2).to(original);
}

}  // namespace sapiens::detail
