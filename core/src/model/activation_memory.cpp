#include "sapiens/model/activation_memory.h"

#include "attention.h"

#include <algorithm>

namespace sapiens {

std::int64_t peakActivationBytes(const Architecture& arch, int batch, int height, int width,
                                 int elementSize) {
  const BackboneArch& b = arch.backbone;
  std::int64_t gridH = height / b.patchSize, gridW = width / b.patchSize;
  if (b.tokenizer.layers > 0) gridH /= b.tokenizer.windowSize, gridW /= b.tokenizer.windowSize;
  const std::int64_t tokens = gridH * gridW + b.prefixTokens();
  const std::int64_t c = b.embedDim;
  const std::int64_t perToken = std::max<std::int64_t>(9 * c, 4 * c + 2 * std::int64_t{b.ffnDim});
  const std::int64_t scores = std::min<std::int64_t>(detail::kScoreChunkBytes, tokens * tokens * elementSize);
  std::int64_t peak = batch * tokens * perToken * elementSize + scores;

  // Head: the largest (input + output) feature-map pair, starting from the backbone's feature map.
  const HeadArch& h = arch.head;
  std::int64_t maps = 0, hh = gridH, ww = gridW, ch = c;
  auto layer = [&](std::int64_t outChannels, int upscale) {
    const std::int64_t in = hh * ww * ch;
    hh *= upscale, ww *= upscale;
    maps = std::max(maps, in + hh * ww * outChannels);
    ch = outChannels;
  };
  switch (arch.task) {
    case Task::Backbone:
      break;
    case Task::Pose:
    case Task::Seg:
      for (int out : h.deconvChannels) layer(out, 2);
      for (int out : h.convChannels) layer(out, 1);
      layer(h.outChannels, 1);
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
    case Task::Matting:
      layer(ch, 1);
      for (int out : h.upsampleChannels) {
        layer(4 * std::int64_t{out}, 1);  // convolution to 4x the channels, then the pixel shuffle
        layer(out, 2);
      }
      for (int out : h.convChannels) layer(out, 1);
      layer(h.outChannels, 1);
      break;
  }
  peak = std::max(peak, batch * maps * elementSize + batch * tokens * c * elementSize);
  return peak + std::int64_t{batch} * 3 * height * width * elementSize;
}

}  // namespace sapiens
