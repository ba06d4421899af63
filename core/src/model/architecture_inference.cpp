#include "sapiens/model/architecture_inference.h"

#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace sapiens {

namespace {

using Shape = std::vector<std::int64_t>;

class ShapeLookup {
 public:
  ShapeLookup(const TensorShapes& shapes, std::string prefix) : shapes_(shapes), prefix_(std::move(prefix)) {}

  const std::string& prefix() const { return prefix_; }
  bool has(const std::string& name) const { return shapes_.count(prefix_ + name) > 0; }
  /// Dimension `axis` of tensor `name`, if the tensor exists and has that axis.
  std::optional<std::int64_t> dim(const std::string& name, std::size_t axis) const {
    auto it = shapes_.find(prefix_ + name);
    if (it == shapes_.end() || it->second.size() <= axis) return std::nullopt;
    return it->second[axis];
  }
  /// 1 + the largest n among keys "<group>.<n>.*" (0 when there are none).
  int indexedCount(const std::string& group) const {
    const std::string start = prefix_ + group + ".";
    int count = 0;
    for (auto it = shapes_.lower_bound(start); it != shapes_.end(); ++it) {
      const std::string& key = it->first;
      if (key.compare(0, start.size(), start) != 0) break;
      std::size_t end = key.find('.', start.size());
      if (end == std::string::npos) continue;
      const std::string number = key.substr(start.size(), end - start.size());
      if (number.empty() || !std::all_of(number.begin(), number.end(), ::isdigit) || number.size() > 6)
        continue;
      count = std::max(count, std::stoi(number) + 1);
    }
    return count;
  }
  /// Whether any key "<group>.<n>.<leaf>" exists for n < count.
  bool anyIndexed(const std::string& group, int count, const std::string& leaf) const {
    for (int i = 0; i < count; ++i) {
      if (has(fmt::format("{}.{}.{}", group, i, leaf))) return true;
    }
    return false;
  }
  /// The first dimension found among the candidates (name, axis, divisor).
  std::optional<std::int64_t> first(
      std::initializer_list<std::tuple<std::string, std::size_t, int>> candidates) const {
    for (const auto& [name, axis, divisor] : candidates) {
      if (auto d = dim(name, axis)) return *d / divisor;
    }
    return std::nullopt;
  }

 private:
  const TensorShapes& shapes_;
  std::string prefix_;
};

[[noreturn]] void fail(const std::string& source, const std::string& reason) {
  throw ModelFormatError(fmt::format("{} is not a usable Sapiens2 checkpoint: {}", source, reason));
}

int toInt(std::int64_t v) {
  return static_cast<int>(v);
}

BackboneArch inferBackbone(const ShapeLookup& s, const std::string& source) {
  BackboneArch arch;
  auto embed = s.first({{"patch_embed.projection.weight", 0, 1}, {"cls_token", 2, 1}, {"ln1.weight", 0, 1}});
  if (!embed)
    fail(source, fmt::format("cannot determine the embedding width (no {}patch_embed.projection.weight)",
                             s.prefix()));
  arch.embedDim = toInt(*embed);
  arch.patchSize = toInt(s.dim("patch_embed.projection.weight", 2).value_or(16));

  arch.numLayers = s.indexedCount("blocks");
  if (arch.numLayers == 0) fail(source, fmt::format("no {}blocks.N.* tensors", s.prefix()));

  arch.qkNorm = s.anyIndexed("blocks", arch.numLayers, "attn.q_norm.weight") ||
                s.anyIndexed("blocks", arch.numLayers, "attn.k_norm.weight");
  arch.qkvBias = s.anyIndexed("blocks", arch.numLayers, "attn.wq.bias") ||
                 s.anyIndexed("blocks", arch.numLayers, "attn.wk.bias") ||
                 s.anyIndexed("blocks", arch.numLayers, "attn.wv.bias");
  arch.layerScale = s.anyIndexed("blocks", arch.numLayers, "attn.gamma.weight");

  std::optional<std::int64_t> headDim;
  std::optional<std::int64_t> ffn;
  for (int i = 0; i < arch.numLayers && (!headDim || !ffn); ++i) {
    const std::string b = fmt::format("blocks.{}.", i);
    if (!headDim) headDim = s.first({{b + "attn.q_norm.weight", 0, 1}, {b + "attn.k_norm.weight", 0, 1}});
    if (!ffn)
      ffn = s.first({{b + "ffn.w3.weight", 1, 1}, {b + "ffn.w12.weight", 0, 2}, {b + "ffn.w12.bias", 0, 2}});
  }
  if (!headDim) {
    if (auto periods = s.dim("rope_embed.periods", 0)) headDim = *periods * 4;
  }
  if (!headDim || *headDim <= 0) {
    fail(source, fmt::format("cannot determine the attention head size (no {}blocks.N.attn.q_norm.weight or "
                             "{}rope_embed.periods)",
                             s.prefix(), s.prefix()));
  }
  if (arch.embedDim % *headDim != 0) {
    fail(source,
         fmt::format(
             "embedding width {} is not a multiple of the head size {} (from {}blocks.N.attn.q_norm.weight)",
             arch.embedDim, *headDim, s.prefix()));
  }
  if (!ffn)
    fail(source, fmt::format("cannot determine the FFN width (no {}blocks.N.ffn.w3.weight)", s.prefix()));
  arch.headDim = toInt(*headDim);
  arch.numHeads = arch.embedDim / arch.headDim;
  arch.ffnDim = toInt(*ffn);

  for (int i = 0; i < arch.numLayers; ++i) {
    const std::string b = fmt::format("blocks.{}.", i);
    auto kvWidth = s.first({{b + "attn.wk.weight", 0, 1},
                            {b + "attn.wv.weight", 0, 1},
                            {b + "attn.wk.bias", 0, 1},
                            {b + "attn.wv.bias", 0, 1}});
    int kv = kvWidth && *kvWidth % arch.headDim == 0 ? toInt(*kvWidth / arch.headDim) : arch.numHeads;
    if (kv <= 0 || arch.numHeads % kv != 0) kv = arch.numHeads;  // reported as a shape mismatch
    arch.kvHeads.push_back(kv);
  }

  arch.storageTokens = toInt(s.dim("storage_tokens", 1).value_or(0));

  arch.tokenizer.layers = s.indexedCount("tokenizer.blocks");
  if (arch.tokenizer.layers > 0) {
    if (auto positions = s.dim("tokenizer.local_pos_embed", 1)) {
      const int window = toInt(std::lround(std::sqrt(static_cast<double>(*positions - 1))));
      if (window > 0) arch.tokenizer.windowSize = window;
    }
    std::optional<std::int64_t> tokFfn;
    for (int j = 0; j < arch.tokenizer.layers && !tokFfn; ++j) {
      const std::string b = fmt::format("tokenizer.blocks.{}.", j);
      tokFfn = s.first({{b + "ffn.w3.weight", 1, 1}, {b + "ffn.w12.weight", 0, 2}});
    }
    arch.tokenizer.ffnDim = toInt(tokFfn.value_or(4 * static_cast<std::int64_t>(arch.embedDim)));
  }
  return arch;
}

// Output channels of layer "<group>.<index>": weight dim 0 (deconv: dim 1), else the bias, else `fallback`.
int layerOut(const ShapeLookup& s, const std::string& layer, bool transposed,
             std::optional<std::int64_t> fallback) {
  if (auto d = s.dim(layer + ".weight", transposed ? 1 : 0)) return toInt(*d);
  if (auto d = s.dim(layer + ".bias", 0)) return toInt(*d);
  return toInt(fallback.value_or(0));
}

int layerKernel(const ShapeLookup& s, const std::string& layer, int fallback) {
  return toInt(s.dim(layer + ".weight", 2).value_or(fallback));
}

void inferConvStack(const ShapeLookup& s, const std::string& group, int defaultKernel,
                    const std::string& next, std::vector<int>& channels, std::vector<int>& kernels) {
  const int count = (s.indexedCount(group) + 2) / 3;
  for (int t = 0; t < count; ++t) {
    const std::string layer = fmt::format("{}.{}", group, 3 * t);
    const std::string following = t + 1 < count ? fmt::format("{}.{}", group, 3 * (t + 1)) : next;
    channels.push_back(layerOut(s, layer, false, s.dim(following + ".weight", 1)));
    kernels.push_back(layerKernel(s, layer, defaultKernel));
  }
}

HeadArch inferHead(const ShapeLookup& s, Task task) {
  HeadArch head;
  auto finalConv = [&](const std::string& name) {
    head.outChannels = layerOut(s, name, false, std::nullopt);
  };
  switch (task) {
    case Task::Backbone:
      break;
    case Task::Pose:
    case Task::Seg: {
      const std::string last(headOutputLayer(task));
      const int deconvs = (s.indexedCount("deconv_layers") + 2) / 3;
      for (int t = 0; t < deconvs; ++t) {
        const std::string layer = fmt::format("deconv_layers.{}", 3 * t);
        const std::string following = t + 1 < deconvs
                                          ? fmt::format("deconv_layers.{}", 3 * (t + 1))
                                          : (s.has("conv_layers.0.weight") ? "conv_layers.0" : last);
        const std::size_t inAxis = following.rfind("deconv", 0) == 0 ? 0 : 1;
        head.deconvChannels.push_back(layerOut(s, layer, true, s.dim(following + ".weight", inAxis)));
        head.deconvKernels.push_back(layerKernel(s, layer, 4));
      }
      inferConvStack(s, "conv_layers", 1, last, head.convChannels, head.convKernels);
      finalConv(last);
      break;
    }
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
    case Task::Matting: {
      const std::string last(headOutputLayer(task));
      const int blocks = s.indexedCount("upsample_blocks");
      for (int u = 0; u < blocks; ++u) {
        const std::string layer = fmt::format("upsample_blocks.{}.0", u);
        std::optional<std::int64_t> fromNorm = s.dim(fmt::format("upsample_blocks.{}.2.norm.weight", u), 0);
        const int width4 =
            layerOut(s, layer, false, fromNorm ? std::optional<std::int64_t>(*fromNorm * 4) : std::nullopt);
        head.upsampleChannels.push_back(width4 / 4);
      }
      inferConvStack(s, "conv_layers", 3, last, head.convChannels, head.convKernels);
      finalConv(last);
      if (task == Task::Pointmap) {
        inferConvStack(s, "scale_conv_layers", 1, "", head.scaleConvChannels, head.scaleConvKernels);
        const int mlpLayers = s.indexedCount("scale_final_layer") / 2;
        for (int t = 0; t < mlpLayers; ++t) {
          const std::string layer = fmt::format("scale_final_layer.{}", 2 * t + 1);
          if (t == 0) head.scaleMlp.push_back(toInt(s.dim(layer + ".weight", 1).value_or(0)));
          head.scaleMlp.push_back(layerOut(s, layer, false, std::nullopt));
        }
      }
      break;
    }
  }
  return head;
}

std::string shapeText(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace

Architecture inferArchitecture(const TensorShapes& shapes, const std::string& source) {
  if (shapes.empty()) fail(source, "it holds no tensors");
  bool prefixed = false;
  bool bare = false;
  std::set<Task> heads;
  const std::string headPrefix = kHeadPrefix;
  for (const auto& [name, shape] : shapes) {
    if (name.rfind("backbone.", 0) == 0)
      prefixed = true;
    else if (name.rfind(headPrefix, 0) != 0 &&
             (name.rfind("patch_embed.", 0) == 0 || name.rfind("blocks.", 0) == 0 || name == "cls_token"))
      bare = true;
    if (name.rfind(headPrefix, 0) == 0) {
      const std::string rest = name.substr(headPrefix.size());
      for (Task task : headTasks())
        if (rest.rfind(std::string(headOutputLayer(task)) + ".", 0) == 0) heads.insert(task);
    }
  }
  if (!prefixed && !bare) {
    fail(source, fmt::format("none of its {} tensors is a Sapiens2 backbone tensor (expected patch_embed.*, "
                             "blocks.N.* or backbone.*; first tensor: {})",
                             shapes.size(), shapes.begin()->first));
  }
  if (heads.size() > 1) {
    std::vector<std::string> names;
    for (Task t : heads) names.emplace_back(taskName(t));
    fail(source,
         fmt::format("its decode_head holds the final layers of several tasks ({})", fmt::join(names, ", ")));
  }
  Architecture arch;
  arch.task = heads.empty() ? Task::Backbone : *heads.begin();
  if (arch.task != Task::Backbone && !prefixed) {
    fail(source,
         fmt::format("it has a {} head (decode_head.*) but no backbone.* tensors", taskName(arch.task)));
  }
  if (arch.task == Task::Backbone && prefixed) {
    const bool anyHead = std::any_of(shapes.begin(), shapes.end(), [&](const auto& entry) {
      return entry.first.rfind(headPrefix, 0) == 0;
    });
    fail(source, anyHead ? "its decode_head.* tensors match no known head (conv_pose, conv_seg, conv_normal, "
                           "conv_albedo, conv_pointmap or conv_matting)"
                         : "it has backbone.* tensors but no decode_head.* (a task file without its head)");
  }
  arch.backbone = inferBackbone(ShapeLookup(shapes, backbonePrefix(arch.task)), source);
  arch.head = inferHead(ShapeLookup(shapes, kHeadPrefix), arch.task);
  return arch;
}

LayoutProblems checkLayout(const TensorShapes& shapes, const Architecture& arch) {
  LayoutProblems problems;
  std::set<std::string> expectedNames;
  for (const ParameterSpec& spec : expectedParameters(arch)) {
    expectedNames.insert(spec.name);
    auto it = shapes.find(spec.name);
    if (it == shapes.end()) {
      problems.missing.push_back(spec.name);
    } else if (it->second != spec.shape) {
      problems.shapeMismatches.push_back(
          fmt::format("{} (file {}, expected {})", spec.name, shapeText(it->second), shapeText(spec.shape)));
    }
  }
  for (const auto& [name, shape] : shapes) {
    if (!expectedNames.count(name)) problems.unexpected.push_back(name);
  }
  return problems;
}

std::string LayoutProblems::summary() const {
  std::vector<std::string> parts;
  if (!missing.empty())
    parts.push_back(fmt::format("{} missing: {}", missing.size(), fmt::join(missing, ", ")));
  if (!unexpected.empty()) {
    parts.push_back(fmt::format("{} unexpected: {}", unexpected.size(), fmt::join(unexpected, ", ")));
  }
  if (!shapeMismatches.empty()) {
    parts.push_back(fmt::format("{} shape mismatch{}: {}", shapeMismatches.size(),
                                shapeMismatches.size() == 1 ? "" : "es", fmt::join(shapeMismatches, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace sapiens
