#include "head_forward.h"

#include "layers.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace sapiens::detail {

namespace {

std::string indexed(const std::string& group, std::size_t index) {
  return fmt::format("{}.{}", group, index);
}

// Normal / albedo / pointmap body: input conv, upsample blocks (conv -> pixel shuffle), conv layers; each
// followed by InstanceNorm (albedo: channel RMSNorm with weights at `<layer>.norm.weight`) and SiLU.
at::Tensor denseStack(const ParameterAccess& p, const HeadArch& head, at::Tensor x, bool rmsNormalised) {
  auto normaliseActivate = [&](const at::Tensor& y, const std::string& normLayer) {
    return rmsNormalised ? at::silu(rmsNorm2d(y, p(normLayer + ".norm.weight"))) : instanceNormSilu2d(y);
  };
  x = normaliseActivate(conv2d(x, p, "input_conv.0"), "input_conv.1");
  for (std::size_t u = 0; u < head.upsampleChannels.size(); ++u) {
    const std::string blockName = indexed("upsample_blocks", u);
    x = at::pixel_shuffle(conv2d(x, p, blockName + ".0"), 2);
    x = normaliseActivate(x, blockName + ".2");
  }
  for (std::size_t t = 0; t < head.convChannels.size(); ++t) {
    x = normaliseActivate(conv2d(x, p, indexed("conv_layers", 3 * t)), indexed("conv_layers", 3 * t + 1));
  }
  return x;
}

// PointmapHead's scale branch on the featmap: stride-2 convs, per-sample flatten, MLP -> (B, 1).
// Always float32: one number scales the whole pointmap, and bf16 arithmetic (oneDNN's bf16 convolutions
// round every output) moves it by 1-2 %; the branch is about 1 % of the model's arithmetic.
at::Tensor pointmapScale(const ParameterAccess& p, const HeadArch& head, const at::Tensor& featmap) {
  auto weight = [&](const std::string& name) { return p(name + ".weight").to(at::kFloat); };
  auto bias = [&](const std::string& name) {
    const at::Tensor b = p.optional(name + ".bias");
    return b.defined() ? b.to(at::kFloat) : b;
  };
  at::Tensor x = featmap.to(at::kFloat);
  for (std::size_t t = 0; t < head.scaleConvChannels.size(); ++t) {
    const std::string name = indexed("scale_conv_layers", 3 * t);
    const at::Tensor w = weight(name);
    const int64_t padding = (w.size(2) - 1) / 2;
    x = instanceNormSilu2d(at::conv2d(x, w, bias(name), {2, 2}, {padding, padding}));
  }
  if (!head.scaleMlp.empty() && x.size(1) * x.size(2) * x.size(3) != head.scaleMlp.front()) {
    throw ModelRunError(fmt::format(
        "the pointmap scale branch needs {} features, but a {}x{} token grid gives {} ({} channels x {}x{}); "
        "pointmap models only run at the input size they were trained for (1024x768 for the released ones)",
        head.scaleMlp.front(), featmap.size(2), featmap.size(3), x.size(1) * x.size(2) * x.size(3), x.size(1),
        x.size(2), x.size(3)));
  }
  x = x.flatten(1);
  const std::size_t layers = head.scaleMlp.empty() ? 0 : head.scaleMlp.size() - 1;
  for (std::size_t t = 0; t < layers; ++t) {
    const std::string name = indexed("scale_final_layer", 2 * t + 1);
    x = at::linear(x, weight(name), bias(name));
    if (t + 1 < layers) x = at::silu(x);
  }
  return x;
}

}  // namespace

// PoseHeatmapHead / SegHead body: (deconv -> InstanceNorm -> SiLU)*, (conv -> InstanceNorm -> SiLU)*.
at::Tensor runDeconvConvBody(const ParameterAccess& p, const HeadArch& head, at::Tensor x) {
  for (std::size_t t = 0; t < head.deconvChannels.size(); ++t) {
    x = instanceNormSilu2d(deconv2d(x, p(indexed("deconv_layers", 3 * t) + ".weight")));
  }
  for (std::size_t t = 0; t < head.convChannels.size(); ++t) {
    x = instanceNormSilu2d(conv2d(x, p, indexed("conv_layers", 3 * t)));
  }
  return x;
}

void runHead(const ParameterAccess& p, Task task, const HeadArch& head, const at::Tensor& featmap,
             ModelOutputs& out) {
  switch (task) {
    case Task::Backbone:
      return;
    case Task::Pose:  // the body's layers may leave channels-last tensors; the outputs are NCHW
      out.add("pose_heatmaps", conv2d(runDeconvConvBody(p, head, featmap), p, "conv_pose").contiguous());
      return;
    case Task::Seg:
      out.add("seg_logits", conv2d(runDeconvConvBody(p, head, featmap), p, "conv_seg").contiguous());
      return;
    case Task::Normal:
      out.add("normal", conv2d(denseStack(p, head, featmap, false), p, "conv_normal"));
      return;
    case Task::Albedo:
      out.add("albedo", conv2d(denseStack(p, head, featmap, true), p, "conv_albedo"));
      return;
    case Task::Pointmap:
      out.add("pointmap", conv2d(denseStack(p, head, featmap, false), p, "conv_pointmap"));
      out.add("scale", pointmapScale(p, head, featmap));
      return;
    case Task::Matting:  // foreground RGB (premultiplied) + alpha, already in [0, 1]
      out.add("matting", at::sigmoid(conv2d(denseStack(p, head, featmap, false), p, "conv_matting")));
      return;
  }
}

}  // namespace sapiens::detail
