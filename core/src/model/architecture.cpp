#include "sapiens/model/architecture.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace sapiens {

bool TokenizerArch::operator==(const TokenizerArch& other) const {
  if (layers == 0 && other.layers == 0) return true;
  return layers == other.layers && windowSize == other.windowSize && ffnDim == other.ffnDim;
}

int BackboneArch::firstGqaBlock() const {
  for (std::size_t i = 0; i < kvHeads.size(); ++i) {
    if (kvHeads[i] < numHeads) return static_cast<int>(i);
  }
  return -1;
}

int BackboneArch::inputMultiple() const {
  return tokenizer.layers > 0 ? patchSize * tokenizer.windowSize : patchSize;
}

bool BackboneArch::operator==(const BackboneArch& other) const {
  return embedDim == other.embedDim && numLayers == other.numLayers && numHeads == other.numHeads &&
         headDim == other.headDim && ffnDim == other.ffnDim && kvHeads == other.kvHeads &&
         storageTokens == other.storageTokens && patchSize == other.patchSize && qkvBias == other.qkvBias &&
         qkNorm == other.qkNorm && layerScale == other.layerScale && tokenizer == other.tokenizer;
}

bool HeadArch::operator==(const HeadArch& other) const {
  return deconvChannels == other.deconvChannels && deconvKernels == other.deconvKernels &&
         convChannels == other.convChannels && convKernels == other.convKernels &&
         upsampleChannels == other.upsampleChannels && outChannels == other.outChannels &&
         scaleConvChannels == other.scaleConvChannels && scaleConvKernels == other.scaleConvKernels &&
         scaleMlp == other.scaleMlp;
}

bool Architecture::operator==(const Architecture& other) const {
  return task == other.task && backbone == other.backbone && head == other.head;
}

namespace {

// The official GQA rule: the first and last 8 blocks are plain multi-head, the rest use H/2 kv heads.
BackboneArch makeBackbone(int embedDim, int numLayers, int numHeads) {
  BackboneArch arch;
  arch.embedDim = embedDim;
  arch.numLayers = numLayers;
  arch.numHeads = numHeads;
  arch.headDim = embedDim / numHeads;
  arch.ffnDim = 4 * embedDim;
  for (int i = 0; i < numLayers; ++i) {
    arch.kvHeads.push_back(i < 8 || i >= numLayers - 8 ? numHeads : numHeads / 2);
  }
  return arch;
}

HeadArch poseHead(const std::vector<int>& deconv, const std::vector<int>& conv) {
  HeadArch head;
  head.deconvChannels = deconv;
  head.deconvKernels.assign(deconv.size(), 4);
  head.convChannels = conv;
  head.convKernels.assign(conv.size(), 1);
  head.outChannels = 308;
  return head;
}

HeadArch segHead() {
  HeadArch head;
  head.deconvChannels = {512, 256, 128, 64};
  head.deconvKernels = {4, 4, 4, 4};
  head.convChannels = {64, 64};
  head.convKernels = {1, 1};
  head.outChannels = 29;
  return head;
}

HeadArch denseHead(const std::vector<int>& upsample, const std::vector<int>& conv) {
  HeadArch head;
  head.upsampleChannels = upsample;
  head.convChannels = conv;
  head.convKernels.assign(conv.size(), 3);
  head.outChannels = 3;
  return head;
}

std::string joinInts(const std::vector<int>& values) {
  return fmt::format("[{}]", fmt::join(values, ", "));
}

// [4 x8, 2 x2, 4 x8]
std::string runLengths(const std::vector<int>& values) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    parts.push_back(j - i > 1 ? fmt::format("{} x{}", values[i], j - i) : fmt::format("{}", values[i]));
    i = j;
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

}  // namespace

const std::vector<std::string>& officialSizes() {
  static const std::vector<std::string> sizes = {"0.1b", "0.4b", "0.8b", "1b", "1b-4k", "5b"};
  return sizes;
}

BackboneArch officialBackbone(std::string_view size) {
  if (size == "0.1b") return makeBackbone(768, 12, 12);
  if (size == "0.4b") return makeBackbone(1024, 24, 16);
  if (size == "0.8b") return makeBackbone(1280, 32, 16);
  if (size == "1b") return makeBackbone(1536, 40, 24);
  if (size == "5b") return makeBackbone(2432, 56, 32);
  if (size == "1b-4k") {
    BackboneArch arch = makeBackbone(1536, 40, 24);
    arch.tokenizer = TokenizerArch{4, 4, 4 * 1536};
    return arch;
  }
  throw std::invalid_argument(
      fmt::format("unknown Sapiens2 size '{}' (known: {})", size, fmt::join(officialSizes(), ", ")));
}

Architecture officialArchitecture(std::string_view size, Task task) {
  Architecture arch;
  arch.task = task;
  arch.backbone = officialBackbone(size);
  if (task == Task::Backbone) return arch;
  if (task == Task::Matting) {  // released at 1b only (2026-05-15): foreground RGB + alpha
    if (size != "1b")
      throw std::invalid_argument(fmt::format(
          "no matting model was released for Sapiens2 {} (the matting model exists for 1b only)", size));
    arch.head = denseHead({768, 512, 256, 128}, {64, 32, 16});
    arch.head.outChannels = 4;
    return arch;
  }
  const bool released = size == "0.4b" || size == "0.8b" || size == "1b" || size == "5b";
  if (!released) {
    throw std::invalid_argument(
        fmt::format("no {} model was released for Sapiens2 {} (task models exist for 0.4b, 0.8b, 1b, 5b)",
                    taskName(task), size));
  }
  const bool is1b = size == "1b";
  const bool is5b = size == "5b";
  switch (task) {
    case Task::Backbone:
      break;
    case Task::Pose:
      arch.head = is1b ? poseHead({1536, 1024}, {768, 512, 256}) : poseHead({1024, 768}, {512, 512, 256});
      break;
    case Task::Seg:
      arch.head = segHead();
      break;
    case Task::Normal:
      arch.head = is5b ? denseHead({1536, 768, 512, 256}, {128, 64, 32})
                       : denseHead({768, 512, 256, 128}, {64, 32, 16});
      break;
    case Task::Albedo:
      arch.head = is5b ? denseHead({1536, 768, 512, 256}, {64, 32, 16})
                       : denseHead({768, 512, 256, 128}, {64, 32, 16});
      break;
    case Task::Matting:
      break;
    case Task::Pointmap:
      arch.head = is5b ? denseHead({1536, 768, 768, 768}, {128, 64, 32})
                       : denseHead({1536, 768, 512, 256}, {64, 32, 16});
      arch.head.scaleConvChannels = {1536, 512, 128};
      arch.head.scaleConvKernels = {1, 1, 1};
      arch.head.scaleMlp = {6144, 512, 128, 1};
      break;
  }
  return arch;
}

std::optional<std::string> officialBackboneSize(const BackboneArch& backbone) {
  for (const std::string& size : officialSizes()) {
    if (officialBackbone(size) == backbone) return size;
  }
  return std::nullopt;
}

std::optional<std::string> officialName(const Architecture& arch) {
  std::optional<std::string> size = officialBackboneSize(arch.backbone);
  if (!size) return std::nullopt;
  std::string stem = *size == "1b-4k" ? "sapiens2_1b_4k" : "sapiens2_" + *size;
  if (arch.task == Task::Backbone) return stem + "_pretrain";
  try {
    if (officialArchitecture(*size, arch.task) == arch) return stem + "_" + std::string(taskName(arch.task));
  } catch (const std::invalid_argument&) {
  }
  return std::nullopt;
}

std::string describeBackbone(const BackboneArch& b) {
  std::string text =
      fmt::format("embed {}, {} layers, {} heads x {} (head dim), FFN {}, kv heads {}", b.embedDim,
                  b.numLayers, b.numHeads, b.headDim, b.ffnDim, runLengths(b.kvHeads));
  text += fmt::format(", {} storage tokens, patch {}", b.storageTokens, b.patchSize);
  text += fmt::format(", qkv bias {}, QK norm {}, LayerScale {}", b.qkvBias ? "yes" : "no",
                      b.qkNorm ? "yes" : "no", b.layerScale ? "yes" : "no");
  if (b.tokenizer.layers > 0) {
    text += fmt::format(", tokenizer {} layers (window {}, FFN {})", b.tokenizer.layers,
                        b.tokenizer.windowSize, b.tokenizer.ffnDim);
  } else {
    text += ", no tokenizer";
  }
  return text;
}

std::string describeOutputs(Task task, const HeadArch& head) {
  switch (task) {
    case Task::Backbone:
      return "";
    case Task::Pose:
      return fmt::format("{} keypoints", head.outChannels);
    case Task::Seg:
      return fmt::format("{} classes", head.outChannels);
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
      return fmt::format("{} channels", head.outChannels);
    case Task::Matting:
      return head.outChannels == 4 ? "foreground RGB + alpha" : fmt::format("{} channels", head.outChannels);
  }
  return "";
}

std::string_view headOutputLayer(Task task) {
  switch (task) {
    case Task::Backbone:
      return "";
    case Task::Pose:
      return "conv_pose";
    case Task::Seg:
      return "conv_seg";
    case Task::Normal:
      return "conv_normal";
    case Task::Albedo:
      return "conv_albedo";
    case Task::Pointmap:
      return "conv_pointmap";
    case Task::Matting:
      return "conv_matting";
  }
  return "";
}

std::string describeHead(Task task, const HeadArch& head) {
  switch (task) {
    case Task::Backbone:
      return "none";
    case Task::Pose:
    case Task::Seg:
      return fmt::format("deconv {} k{}, conv {} k{}, {}", joinInts(head.deconvChannels),
                         joinInts(head.deconvKernels), joinInts(head.convChannels),
                         joinInts(head.convKernels), describeOutputs(task, head));
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
    case Task::Matting: {
      std::string text =
          fmt::format("upsample {}, conv {} k{}, {}{}", joinInts(head.upsampleChannels),
                      joinInts(head.convChannels), joinInts(head.convKernels), describeOutputs(task, head),
                      task == Task::Albedo ? ", RMSNorm2d" : ", InstanceNorm");
      if (task == Task::Pointmap) {
        text += fmt::format("; scale branch conv {} k{} stride 2, MLP {}", joinInts(head.scaleConvChannels),
                            joinInts(head.scaleConvKernels), joinInts(head.scaleMlp));
      }
      return text;
    }
  }
  return "";
}

}  // namespace sapiens
