#include "sapiens/model/parameter_layout.h"

#include <string>

namespace sapiens {

std::int64_t ParameterSpec::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string backbonePrefix(Task task) {
  return task == Task::Backbone ? "" : "backbone.";
}

std::string ropePeriodsName(Task task) {
  return backbonePrefix(task) + "rope_embed.periods";
}

namespace {

using Shape = std::vector<std::int64_t>;

class LayoutBuilder {
 public:
  explicit LayoutBuilder(std::vector<ParameterSpec>& out) : out_(out) {}

  void add(const std::string& name, Shape shape) { out_.push_back({name, std::move(shape)}); }
  void linear(const std::string& name, std::int64_t out, std::int64_t in, bool bias = true) {
    add(name + ".weight", {out, in});
    if (bias) add(name + ".bias", {out});
  }
  void conv(const std::string& name, std::int64_t out, std::int64_t in, std::int64_t k) {
    add(name + ".weight", {out, in, k, k});
    add(name + ".bias", {out});
  }

 private:
  std::vector<ParameterSpec>& out_;
};

void addBlock(LayoutBuilder& b, const std::string& p, const BackboneArch& arch, std::int64_t kvHeads,
              int ffnDim, bool tokenizerBlock) {
  const std::int64_t c = arch.embedDim;
  const std::int64_t kvWidth = tokenizerBlock ? c : kvHeads * arch.headDim;
  b.add(p + "ln1.weight", {c});
  b.linear(p + "attn.wq", c, c, arch.qkvBias);
  b.linear(p + "attn.wk", kvWidth, c, arch.qkvBias);
  b.linear(p + "attn.wv", kvWidth, c, arch.qkvBias);
  if (!tokenizerBlock && arch.qkNorm) {
    b.add(p + "attn.q_norm.weight", {arch.headDim});
    b.add(p + "attn.k_norm.weight", {arch.headDim});
  }
  b.linear(p + "attn.proj", c, c);
  if (!tokenizerBlock && arch.layerScale) b.add(p + "attn.gamma.weight", {c});
  b.add(p + "ln2.weight", {c});
  b.linear(p + "ffn.w12", 2 * static_cast<std::int64_t>(ffnDim), c);
  b.linear(p + "ffn.w3", c, ffnDim);
}

void addBackbone(LayoutBuilder& b, const std::string& p, const BackboneArch& arch) {
  const std::int64_t c = arch.embedDim;
  b.conv(p + "patch_embed.projection", c, 3, arch.patchSize);
  if (arch.tokenizer.layers > 0) {
    const std::int64_t window = arch.tokenizer.windowSize;
    b.add(p + "tokenizer.local_pos_embed", {1, 1 + window * window, c});
    b.add(p + "tokenizer.w_cls", {1, 1, c});
    for (int j = 0; j < arch.tokenizer.layers; ++j) {
      addBlock(b, p + "tokenizer.blocks." + std::to_string(j) + ".", arch, arch.numHeads,
               arch.tokenizer.ffnDim, true);
    }
  }
  b.add(p + "cls_token", {1, 1, c});
  if (arch.storageTokens > 0) b.add(p + "storage_tokens", {1, arch.storageTokens, c});
  b.add(p + "rope_embed.periods", {arch.headDim / 4});
  for (int i = 0; i < arch.numLayers; ++i) {
    const int kv = i < static_cast<int>(arch.kvHeads.size()) ? arch.kvHeads[i] : arch.numHeads;
    addBlock(b, p + "blocks." + std::to_string(i) + ".", arch, kv, arch.ffnDim, false);
  }
  b.add(p + "ln1.weight", {c});
}

// Deconv + conv stacks of the pose and seg heads; returns the channels entering the final 1x1 conv.
std::int64_t addDeconvConvStack(LayoutBuilder& b, const std::string& p, const HeadArch& head,
                                std::int64_t in) {
  for (std::size_t t = 0; t < head.deconvChannels.size(); ++t) {
    const std::int64_t k = t < head.deconvKernels.size() ? head.deconvKernels[t] : 4;
    b.add(p + "deconv_layers." + std::to_string(3 * t) + ".weight", {in, head.deconvChannels[t], k, k});
    in = head.deconvChannels[t];
  }
  for (std::size_t t = 0; t < head.convChannels.size(); ++t) {
    const std::int64_t k = t < head.convKernels.size() ? head.convKernels[t] : 1;
    b.conv(p + "conv_layers." + std::to_string(3 * t), head.convChannels[t], in, k);
    in = head.convChannels[t];
  }
  return in;
}

// input_conv + upsample blocks + conv layers of the normal/albedo/pointmap heads.
std::int64_t addDenseStack(LayoutBuilder& b, const std::string& p, const HeadArch& head, std::int64_t in,
                           bool rmsNorm) {
  b.conv(p + "input_conv.0", in, in, 3);
  if (rmsNorm) b.add(p + "input_conv.1.norm.weight", {in});
  for (std::size_t u = 0; u < head.upsampleChannels.size(); ++u) {
    const std::string block = p + "upsample_blocks." + std::to_string(u) + ".";
    b.conv(block + "0", 4 * static_cast<std::int64_t>(head.upsampleChannels[u]), in, 3);
    if (rmsNorm) b.add(block + "2.norm.weight", {head.upsampleChannels[u]});
    in = head.upsampleChannels[u];
  }
  for (std::size_t t = 0; t < head.convChannels.size(); ++t) {
    const std::int64_t k = t < head.convKernels.size() ? head.convKernels[t] : 3;
    b.conv(p + "conv_layers." + std::to_string(3 * t), head.convChannels[t], in, k);
    if (rmsNorm)
      b.add(p + "conv_layers." + std::to_string(3 * t + 1) + ".norm.weight", {head.convChannels[t]});
    in = head.convChannels[t];
  }
  return in;
}

void addHead(LayoutBuilder& b, Task task, const HeadArch& head, std::int64_t embedDim) {
  const std::string p = kHeadPrefix;
  switch (task) {
    case Task::Backbone:
      return;
    case Task::Pose:
      b.conv(p + "conv_pose", head.outChannels, addDeconvConvStack(b, p, head, embedDim), 1);
      return;
    case Task::Seg:
      b.conv(p + "conv_seg", head.outChannels, addDeconvConvStack(b, p, head, embedDim), 1);
      return;
    case Task::Normal:
      b.conv(p + "conv_normal", head.outChannels, addDenseStack(b, p, head, embedDim, false), 1);
      return;
    case Task::Albedo:
      b.conv(p + "conv_albedo", head.outChannels, addDenseStack(b, p, head, embedDim, true), 1);
      return;
    case Task::Matting:
      b.conv(p + "conv_matting", head.outChannels, addDenseStack(b, p, head, embedDim, false), 1);
      return;
    case Task::Pointmap: {
      const std::int64_t last = addDenseStack(b, p, head, embedDim, false);
      std::int64_t in = embedDim;
      for (std::size_t t = 0; t < head.scaleConvChannels.size(); ++t) {
        const std::int64_t k = t < head.scaleConvKernels.size() ? head.scaleConvKernels[t] : 1;
        b.conv(p + "scale_conv_layers." + std::to_string(3 * t), head.scaleConvChannels[t], in, k);
        in = head.scaleConvChannels[t];
      }
      for (std::size_t t = 0; t + 1 < head.scaleMlp.size(); ++t) {
        b.linear(p + "scale_final_layer." + std::to_string(2 * t + 1), head.scaleMlp[t + 1],
                 head.scaleMlp[t]);
      }
      b.conv(p + "conv_pointmap", head.outChannels, last, 1);
      return;
    }
  }
}

}  // namespace

std::vector<ParameterSpec> expectedParameters(const Architecture& arch) {
  std::vector<ParameterSpec> specs;
  LayoutBuilder builder(specs);
  addBackbone(builder, backbonePrefix(arch.task), arch.backbone);
  addHead(builder, arch.task, arch.head, arch.backbone.embedDim);
  return specs;
}

std::int64_t parameterCount(const Architecture& arch) {
  std::int64_t total = 0;
  for (const ParameterSpec& spec : expectedParameters(arch)) total += spec.numel();
  return total;
}

}  // namespace sapiens
