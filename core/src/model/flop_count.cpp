#include "sapiens/model/flop_count.h"

namespace sapiens {
namespace {

// 2 * MACs of a dense layer applied to `rows` vectors.
double linear(double rows, double in, double out) {
  return 2.0 * rows * in * out;
}
// Convolution with `k`x`k` kernels producing an outH x outW map.
double conv(double outH, double outW, double in, double out, int k) {
  return 2.0 * outH * outW * in * out * k * k;
}

double blockFlops(const BackboneArch& b, double tokens, int kvHeads, double batch, FlopCount& count) {
  const double c = b.embedDim;
  const double kv = static_cast<double>(kvHeads) * b.headDim;
  const double rows = batch * tokens;
  double f = linear(rows, c, c) + 2 * linear(rows, c, kv) + linear(rows, c, c);  // q, k, v, proj
  f += linear(rows, c, 2.0 * b.ffnDim) + linear(rows, b.ffnDim, c);              // SwiGLU
  count.linear += f;
  const double attention = batch * 2.0 * (2.0 * tokens * tokens * b.headDim * b.numHeads);
  count.attention += attention;
  return f + attention;
}

}  // namespace

FlopCount forwardFlops(const Architecture& arch, int batch, int height, int width) {
  FlopCount count;
  const BackboneArch& b = arch.backbone;
  int gridH = height / b.patchSize;
  int gridW = width / b.patchSize;
  count.backbone += batch * conv(gridH, gridW, 3, b.embedDim, b.patchSize);
  if (b.tokenizer.layers > 0) {
    const int ws = b.tokenizer.windowSize;
    const double windows = double(gridH / ws) * (gridW / ws);
    BackboneArch tok = b;
    tok.ffnDim = b.tokenizer.ffnDim > 0 ? b.tokenizer.ffnDim : b.ffnDim;
    for (int i = 0; i < b.tokenizer.layers; ++i)
      count.backbone += blockFlops(tok, ws * ws + 1, b.numHeads, batch * windows, count);
    gridH /= ws;
    gridW /= ws;
  }
  const double tokens = double(gridH) * gridW + b.prefixTokens();
  for (int i = 0; i < b.numLayers; ++i) {
    const int kv = i < static_cast<int>(b.kvHeads.size()) ? b.kvHeads[i] : b.numHeads;
    count.backbone += blockFlops(b, tokens, kv, batch, count);
  }

  const HeadArch& h = arch.head;
  double hh = gridH, ww = gridW, ch = b.embedDim;
  bool readsFeatures = true;  // the next layer added is one that reads the backbone's features
  auto addLayer = [&](double flops) {
    if (readsFeatures) count.headOnFeatures += flops;
    readsFeatures = false;
    count.head += flops;
  };
  switch (arch.task) {
    case Task::Backbone:
      break;
    case Task::Pose:
    case Task::Seg:
      for (int out : h.deconvChannels) {  // transposed conv k4 s2: every input pixel feeds 16 outputs
        addLayer(2.0 * hh * ww * ch * out * 16);
        hh *= 2, ww *= 2, ch = out;
      }
      for (size_t i = 0; i < h.convChannels.size(); ++i) {
        const int k = i < h.convKernels.size() ? h.convKernels[i] : 1;
        addLayer(conv(hh, ww, ch, h.convChannels[i], k));
        ch = h.convChannels[i];
      }
      addLayer(conv(hh, ww, ch, h.outChannels, 1));
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
    case Task::Matting: {
      addLayer(conv(hh, ww, ch, ch, 3));    // input_conv
      for (int out : h.upsampleChannels) {  // conv3x3 to 4*out, then pixel shuffle
        addLayer(conv(hh, ww, ch, 4.0 * out, 3));
        hh *= 2, ww *= 2, ch = out;
      }
      for (size_t i = 0; i < h.convChannels.size(); ++i) {
        const int k = i < h.convKernels.size() ? h.convKernels[i] : 3;
        addLayer(conv(hh, ww, ch, h.convChannels[i], k));
        ch = h.convChannels[i];
      }
      addLayer(conv(hh, ww, ch, h.outChannels, 1));
      if (arch.task == Task::Pointmap) {
        double sh = gridH, sw = gridW, sc = b.embedDim;
        readsFeatures = true;                  // the scale branch starts from the features too
        for (int out : h.scaleConvChannels) {  // 1x1, stride 2
          sh = (sh - 1) / 2 + 1, sw = (sw - 1) / 2 + 1;
          sh = static_cast<long long>(sh), sw = static_cast<long long>(sw);
          addLayer(conv(sh, sw, sc, out, 1));
          sc = out;
        }
        for (size_t i = 1; i < h.scaleMlp.size(); ++i) addLayer(linear(1, h.scaleMlp[i - 1], h.scaleMlp[i]));
      }
      break;
    }
  }
  count.head *= batch;
  count.headOnFeatures *= batch;
  return count;
}

GemmShape dominantGemm(const Architecture& arch, int batch, int height, int width) {
  const BackboneArch& b = arch.backbone;
  long long gridH = height / b.patchSize, gridW = width / b.patchSize;
  if (b.tokenizer.layers > 0) gridH /= b.tokenizer.windowSize, gridW /= b.tokenizer.windowSize;
  return {batch * (gridH * gridW + b.prefixTokens()), b.embedDim, 2LL * b.ffnDim};
}

}  // namespace sapiens
