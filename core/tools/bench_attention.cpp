// sapiens-bench-attention [--arch A] [--height H] [--width W] [--repeat N]: one attention layer of an
// official backbone (A default 0.4b, input H x W default 1024 x 768, float32, CPU) by the tiled kernel
// (AVX-512 CPUs) and by the two-GEMM path that other CPUs take, and in bf16 by oneDNN's products and the
// AMX kernel where they are used, against the rate of the model's dominant
// GEMM (float32 and bf16) measured in the same run. Plain and grouped (H / 2 kv heads) layers. Median of N
// runs (default 5, after one warm-up). Figures: docs/PERFORMANCE.md.

#include "model/attention.h"
#include "model/attention_amx.h"
#include "model/attention_onednn.h"
#include "model/attention_tiled.h"
#include "sapiens/common/allocator.h"
#include "sapiens/common/blas_kernels.h"
#include "sapiens/common/threads.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/linear_product.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

double medianMs(int repeat, const std::function<void()>& work) {
  work();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    work();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  sapiens::threads::ensureThreadPoolWaitPolicy(argc, argv);
  sapiens::memory::keepLargeBlocksInHeap();
  std::string arch = "0.4b";
  int height = 1024, width = 768, repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--arch"))
      arch = argv[i + 1];
    else if (!std::strcmp(argv[i], "--height"))
      height = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--width"))
      width = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::max(1, std::atoi(argv[i + 1]));
  }
  const sapiens::BackboneArch b = sapiens::officialBackbone(arch);
  if (b.numLayers == 0 || height % b.patchSize || width % b.patchSize) {
    std::fprintf(stderr, "unknown --arch %s or a size that is not a multiple of %d\n", arch.c_str(),
                 b.patchSize);
    return 2;
  }
  sapiens::threads::configure(0);
  c10::InferenceMode inference;
  at::manual_seed(1);
  const int64_t tokens = int64_t{height / b.patchSize} * (width / b.patchSize) + b.prefixTokens();
  const int64_t heads = b.numHeads, depth = b.headDim;
  const double gflop = 4.0 * tokens * tokens * depth * heads / 1e9;

  const at::Tensor x = at::randn({tokens, b.embedDim}), w = at::randn({2 * int64_t{b.ffnDim}, b.embedDim});
  const double floorMs = medianMs(repeat, [&] { at::linear(x, w); });
  const double floorRate = 2.0 * tokens * b.embedDim * 2.0 * b.ffnDim / floorMs / 1e6;
  const at::Tensor xh = x.to(at::kBFloat16), wh = w.to(at::kBFloat16);
  const double bf16FloorMs = medianMs(repeat, [&] { sapiens::linearProduct(xh, wh); });
  const double bf16FloorRate = 2.0 * tokens * b.embedDim * 2.0 * b.ffnDim / bf16FloorMs / 1e6;
  std::printf("%s attention at %dx%d: %lld tokens, %lld heads of %lld, %.1f GFLOP; %d threads; OpenBLAS %s\n",
              arch.c_str(), height, width, static_cast<long long>(tokens), static_cast<long long>(heads),
              static_cast<long long>(depth), gflop, at::get_num_threads(),
              sapiens::blas::openBlasCore().c_str());
  std::printf("floor      GEMM %lld x %d x %d       %8.1f ms  %6.1f GFLOP/s\n",
              static_cast<long long>(tokens), b.embedDim, 2 * b.ffnDim, floorMs, floorRate);
  std::printf("bf16 floor GEMM %lld x %d x %d       %8.1f ms  %6.1f GFLOP/s\n",
              static_cast<long long>(tokens), b.embedDim, 2 * b.ffnDim, bf16FloorMs, bf16FloorRate);

  for (const int64_t kvHeads : {heads, heads / 2}) {
    const at::Tensor q = at::randn({1, heads, tokens, depth});
    const at::Tensor k = at::randn({1, kvHeads, tokens, depth}), v = at::randn({1, kvHeads, tokens, depth});
    auto report = [&](const char* path, double ms) {
      std::printf("%-10s %2lld kv heads                %8.1f ms  %6.1f GFLOP/s  floor ratio %.2f\n", path,
                  static_cast<long long>(kvHeads), ms, gflop / ms * 1e3, floorRate / (gflop / ms * 1e3));
    };
    if (sapiens::detail::tiledAttentionApplies(q, k, v))
      report("tiled", medianMs(repeat, [&] { sapiens::detail::tiledAttention(q, k, v); }));
    else
      std::printf("tiled      not used on this CPU (no AVX-512)\n");
    const at::Tensor kr = k.repeat_interleave(heads / kvHeads, 1),
                     vr = v.repeat_interleave(heads / kvHeads, 1);
    report("two GEMMs", medianMs(repeat, [&] { sapiens::detail::attentionByMatrixProducts(q, kr, vr); }));
    const at::Tensor qh = q.to(at::kBFloat16), kh = k.to(at::kBFloat16), vh = v.to(at::kBFloat16);
    auto reportBf16 = [&](const char* path, double ms) {
      std::printf("%-10s %2lld kv heads                %8.1f ms  %6.1f GFLOP/s  floor ratio %.2f (bf16)\n",
                  path, static_cast<long long>(kvHeads), ms, gflop / ms * 1e3,
                  bf16FloorRate / (gflop / ms * 1e3));
    };
    if (sapiens::detail::oneDnnAttentionApplies(qh, kh, vh))
      reportBf16("oneDNN", medianMs(repeat, [&] { sapiens::detail::oneDnnAttention(qh, kh, vh); }));
    if (sapiens::detail::amxAttentionApplies(qh, kh, vh))
      reportBf16("AMX", medianMs(repeat, [&] { sapiens::detail::amxAttention(qh, kh, vh); }));
  }
  return 0;
}
