#include "backbone_forward.h"

#include "attention.h"
#include "layers.h"
#include "norm_rope_bf16.h"
#include "rope.h"
#include "sapiens/model/forward_interrupt.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <optional>

namespace sapiens::detail {

namespace {

struct AttentionConfig {
  int64_t heads = 0;
  int64_t kvHeads = 0;
  int64_t headDim = 0;
  bool qkNorm = false;
  bool layerScale = false;
};

MatmulEpilogue adding(const at::Tensor& residual, const at::Tensor& scale = {}) {
  MatmulEpilogue e;
  e.add = residual;
  e.scale = scale;
  return e;
}

// residual + attention(x): the residual is added by the output projection.
at::Tensor attentionBranch(const ParameterAccess& p, const AttentionConfig& cfg, const at::Tensor& x,
                           const RopeTables* rope, const at::Tensor& residual) {
  const int64_t batch = x.size(0);
  const int64_t tokens = x.size(1);
  at::Tensor q = linear(x, p, "wq").view({batch, tokens, cfg.heads, cfg.headDim});
  at::Tensor k = linear(x, p, "wk").view({batch, tokens, cfg.kvHeads, cfg.headDim});
  at::Tensor v = linear(x, p, "wv").view({batch, tokens, cfg.kvHeads, cfg.headDim}).permute({0, 2, 1, 3});
  const bool bf16Tables = rope == nullptr || rope->sin.scalar_type() == at::kBFloat16;
  if (cfg.qkNorm && bf16Tables && fusedNormApplies(q, p("q_norm.weight")) &&
      fusedNormApplies(k, p("k_norm.weight"))) {
    // One pass each over q and k, written head-major.
    q = rmsNormRopeBf16(q, p("q_norm.weight"), kRmsNormEps, rope);
    k = rmsNormRopeBf16(k, p("k_norm.weight"), kRmsNormEps, rope);
  } else {
    q = q.permute({0, 2, 1, 3});
    k = k.permute({0, 2, 1, 3});
    if (cfg.qkNorm) {
      q = rmsNorm(q, p("q_norm.weight"));
      k = rmsNorm(k, p("k_norm.weight"));
    }
    if (rope != nullptr) {
      q = applyRope(q, *rope);
      k = applyRope(k, *rope);
    }
  }
  at::Tensor out = attention(q, k, v).transpose(1, 2).reshape({batch, tokens, cfg.heads * cfg.headDim});
  return linear(out, p, "proj", adding(residual, cfg.layerScale ? p("gamma.weight") : at::Tensor()));
}

// The gate and value halves of w12 as two oneDNN products, SiLU fused into the first and the product of
// the halves into the second: no tokens x 2F tensor, no separate passes. Undefined where oneDNN does not
// take them.
at::Tensor fusedGatedHidden(const ParameterAccess& p, const at::Tensor& x) {
  const at::Tensor& w12 = p("w12.weight");
  if (!oneDnnLinearApplies(x, w12)) return {};
  const at::Tensor b12 = p.optional("w12.bias");
  const int64_t f = w12.size(0) / 2;
  const auto half = [&](int64_t i) { return b12.defined() ? b12.narrow(0, i * f, f) : b12; };
  MatmulEpilogue silu;
  silu.silu = true;
  const at::Tensor gate = oneDnnLinear(x, w12.narrow(0, 0, f), half(0), silu);
  if (!gate.defined()) return {};
  MatmulEpilogue gated;
  gated.multiply = gate;
  return oneDnnLinear(x, w12.narrow(0, f, f), half(1), gated);
}

// Tokens per pass of the oneDNN SwiGLU.
constexpr int64_t kSwiGluRows = 1024;

// residual + SwiGLU(x) on oneDNN, kSwiGluRows tokens at a time into one output: the gate and hidden
// activations (2 x tokens x F, 50 MB at the 0.4b's 1024 x 768) were the forward's largest tensors, and
// taken and freed in every block they left holes that the heap grew around. Undefined where oneDNN does
// not take the operands.
at::Tensor swiGluByRows(const ParameterAccess& p, const at::Tensor& x, const at::Tensor& residual) {
  if (!oneDnnLinearApplies(x, p("w12.weight"))) return {};
  const at::Tensor rows = x.reshape({-1, x.size(-1)});
  const at::Tensor residualRows = residual.reshape({-1, residual.size(-1)}).contiguous();
  at::Tensor y = at::empty(residualRows.sizes(), residualRows.options());
  for (int64_t first = 0; first < rows.size(0); first += kSwiGluRows) {
    const int64_t count = std::min(kSwiGluRows, rows.size(0) - first);
    const at::Tensor hidden = fusedGatedHidden(p, rows.narrow(0, first, count));
    const MatmulEpilogue epilogue = adding(residualRows.narrow(0, first, count));
    at::Tensor part = y.narrow(0, first, count);
    if (!hidden.defined() || !oneDnnLinearApplies(hidden, p("w3.weight")) ||
        !oneDnnLinear(hidden, p("w3.weight"), p.optional("w3.bias"), epilogue, part).defined())
      return {};
  }
  return y.view(residual.sizes());
}

// residual + SwiGLU(x): the residual is added by the output projection.
at::Tensor swiGlu(const ParameterAccess& p, const at::Tensor& x, const at::Tensor& residual) {
  if (at::Tensor y = swiGluByRows(p, x, residual); y.defined()) return y;
  // In place on the halves of the projection: two fewer activations of tokens x F.
  std::vector<at::Tensor> halves = linear(x, p, "w12").chunk(2, -1);
  const at::Tensor hidden = at::silu_(halves[0]).mul_(halves[1]);
  return linear(hidden, p, "w3", adding(residual));
}

at::Tensor block(const ParameterAccess& p, const AttentionConfig& cfg, const at::Tensor& x,
                 const RopeTables* rope) {
  const at::Tensor out = attentionBranch(p.sub("attn."), cfg, rmsNorm(x, p("ln1.weight")), rope, x);
  return swiGlu(p.sub("ffn."), rmsNorm(out, p("ln2.weight")), out);
}

// 4K tokenizer: every window of windowSize x windowSize patches becomes one token (the output at the
// position of a learned window cls token). Returns (B, gridH / ws * gridW / ws, C).
at::Tensor tokenize(const ParameterAccess& p, const BackboneArch& arch, const at::Tensor& patches,
                    int64_t gridH, int64_t gridW) {
  const int64_t batch = patches.size(0);
  const int64_t channels = patches.size(2);
  const int64_t ws = arch.tokenizer.windowSize;
  const int64_t windowsH = gridH / ws;
  const int64_t windowsW = gridW / ws;
  const at::Tensor windows = patches.view({batch, windowsH, ws, windowsW, ws, channels})
                                 .permute({0, 1, 3, 2, 4, 5})
                                 .reshape({batch * windowsH * windowsW, ws * ws, channels});
  const AttentionConfig cfg{arch.numHeads, arch.numHeads, arch.headDim, false, false};
  const at::Tensor& windowCls = p("tokenizer.w_cls");
  const at::Tensor& positions = p("tokenizer.local_pos_embed");
  std::vector<at::Tensor> outputs;
  const int64_t total = windows.size(0);
  for (int64_t start = 0; start < total; start += kTokenizerWindowChunk) {
    const int64_t count = std::min(kTokenizerWindowChunk, total - start);
    at::Tensor x =
        at::cat({windowCls.expand({count, -1, -1}), windows.narrow(0, start, count)}, 1).add(positions);
    for (int j = 0; j < arch.tokenizer.layers; ++j) {
      x = block(p.sub("tokenizer.blocks." + std::to_string(j) + "."), cfg, x, nullptr);
    }
    outputs.push_back(x.select(1, 0));
  }
  return at::cat(outputs, 0).view({batch, windowsH * windowsW, channels});
}

}  // namespace

BackboneResult runBackbone(const ParameterAccess& p, const BackboneArch& arch, const at::Tensor& input,
                           RopePrecision ropePrecision, ModelOutputs* capture) {
  const int64_t batch = input.size(0);
  at::Tensor embedded =
      conv2dSummingInFloat(input, p("patch_embed.projection.weight"), p("patch_embed.projection.bias"),
                           {arch.patchSize, arch.patchSize}, {0, 0});
  int64_t gridH = embedded.size(2);
  int64_t gridW = embedded.size(3);
  at::Tensor x = embedded.flatten(2).transpose(1, 2);
  if (capture) capture->add("patch_embed_out", x);
  if (arch.tokenizer.layers > 0) {
    x = tokenize(p, arch, x, gridH, gridW);
    gridH /= arch.tokenizer.windowSize;
    gridW /= arch.tokenizer.windowSize;
  }

  std::vector<at::Tensor> sequence = {p("cls_token").expand({batch, -1, -1})};
  if (arch.storageTokens > 0) sequence.push_back(p("storage_tokens").expand({batch, -1, -1}));
  sequence.push_back(x);
  x = at::cat(sequence, 1);

  const at::Tensor& periods = p("rope_embed.periods");
  const RopeTables rope = ropeTables(periods, gridH, gridW, ropePrecision);
  if (capture) {
    capture->add("rope_periods", periods);
    capture->add("rope_sin", rope.sin);
    capture->add("rope_cos", rope.cos);
  }

  const int gqaBlock = arch.firstGqaBlock();
  for (int i = 0; i < arch.numLayers; ++i) {
    throwIfForwardInterrupted();
    const AttentionConfig cfg{arch.numHeads, arch.kvHeads[i], arch.headDim, arch.qkNorm, arch.layerScale};
    if (capture && i == 0) capture->add("block0_in", x);
    if (capture && i == gqaBlock) capture->add("gqa_block_in", x);
    x = block(p.sub("blocks." + std::to_string(i) + "."), cfg, x, &rope);
    if (capture && i == 0) capture->add("block0_out", x);
    if (capture && i == gqaBlock) capture->add("gqa_block_out", x);
  }
  if (capture) capture->add("last_block_out", x);
  x = rmsNorm(x, p("ln1.weight"));

  const int64_t channels = x.size(2);
  at::Tensor featmap = x.narrow(1, arch.prefixTokens(), gridH * gridW)
                           .reshape({batch, gridH, gridW, channels})
                           .permute({0, 3, 1, 2});
  return {x, featmap};
}

}  // namespace sapiens::detail
