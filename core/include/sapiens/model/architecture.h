#pragma once
// The shape of a Sapiens2 network: backbone dimensions, per-block grouped-query attention, optional 4K
// tokenizer, and the task head's layer widths. Official sizes come from the released configs; any other
// combination (e.g. the tiny golden test models) is "custom" and works the same way.

#include "sapiens/model/task.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sapiens {

/// The 4K variant's windowed tokenizer in front of the blocks (layers == 0: none).
struct TokenizerArch {
  int layers = 0;
  int windowSize = 4;
  int ffnDim = 0;

  bool operator==(const TokenizerArch& other) const;
  bool operator!=(const TokenizerArch& other) const { return !(*this == other); }
};

struct BackboneArch {
  int embedDim = 0;
  int numLayers = 0;
  int numHeads = 0;
  int headDim = 0;
  int ffnDim = 0;            ///< SwiGLU hidden width F (w12 has 2F rows)
  std::vector<int> kvHeads;  ///< key/value heads of each block (numHeads = plain multi-head)
  int storageTokens = 8;
  int patchSize = 16;
  bool qkvBias = true;
  bool qkNorm = true;
  bool layerScale = true;  ///< attn.gamma on the attention branch
  TokenizerArch tokenizer;

  /// 1 cls token + the storage tokens.
  int prefixTokens() const { return 1 + storageTokens; }
  /// Index of the first block with fewer key/value heads than query heads, -1 when there is none.
  int firstGqaBlock() const;
  /// Input sides must be multiples of this (16, or 64 with the tokenizer).
  int inputMultiple() const;

  bool operator==(const BackboneArch& other) const;
  bool operator!=(const BackboneArch& other) const { return !(*this == other); }
};

/// Task-head widths. Which fields are used depends on the task:
/// pose/seg: deconv* + conv* + outChannels; normal/albedo: upsampleChannels + conv* + outChannels;
/// pointmap: as normal plus scaleConv* and scaleMlp.
struct HeadArch {
  std::vector<int> deconvChannels;
  std::vector<int> deconvKernels;
  std::vector<int> convChannels;
  std::vector<int> convKernels;
  std::vector<int> upsampleChannels;
  int outChannels = 0;  ///< keypoints (pose), classes (seg), 3 (dense heads), 4 or 1 (matting: RGB + alpha)
  std::vector<int> scaleConvChannels;  ///< pointmap scale branch, stride-2 convolutions
  std::vector<int> scaleConvKernels;
  std::vector<int> scaleMlp;  ///< widths including the flattened input, e.g. {6144, 512, 128, 1}

  bool operator==(const HeadArch& other) const;
  bool operator!=(const HeadArch& other) const { return !(*this == other); }
};

struct Architecture {
  Task task = Task::Backbone;
  BackboneArch backbone;
  HeadArch head;  ///< empty for Task::Backbone

  bool operator==(const Architecture& other) const;
  bool operator!=(const Architecture& other) const { return !(*this == other); }
};

/// Released backbone sizes: "0.1b", "0.4b", "0.8b", "1b", "1b-4k", "5b".
const std::vector<std::string>& officialSizes();
/// Throws std::invalid_argument naming the valid sizes.
BackboneArch officialBackbone(std::string_view size);
/// The released configuration of `task` at `size` (Backbone = the pretrain checkpoint). Throws
/// std::invalid_argument for a combination that was never released (e.g. pose at 0.1b).
Architecture officialArchitecture(std::string_view size, Task task);

/// The official size whose backbone equals `backbone`, if any.
std::optional<std::string> officialBackboneSize(const BackboneArch& backbone);
/// "sapiens2_0.4b_pose" when both backbone and head equal a released configuration
/// ("sapiens2_1b_4k_pretrain" for backbones), else nullopt.
std::optional<std::string> officialName(const Architecture& arch);

/// One line per topic, e.g. "embed 1024, 24 layers, 16 heads x 64, FFN 4096, ...".
std::string describeBackbone(const BackboneArch& backbone);
/// e.g. "deconv [1024, 768] k[4, 4], conv [512, 512, 256] k[1, 1, 1], 308 keypoints".
std::string describeHead(Task task, const HeadArch& head);
/// The head's last layer, under "decode_head.": "conv_pose", "conv_seg", "conv_normal", "conv_albedo",
/// "conv_pointmap", "conv_matting" ("" for the backbone). Its presence tells a checkpoint's task.
std::string_view headOutputLayer(Task task);

/// "308 keypoints", "29 classes", "3 channels" or "" for the backbone.
std::string describeOutputs(Task task, const HeadArch& head);

}  // namespace sapiens
