#include "pipeline/pose_decode.h"
#include "pipeline/postprocess.h"
#include "sapiens/finetune/fine_tuner.h"
#include "sapiens/model/model.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>

namespace sapiens {
namespace {

// The one tensor `name` of a head's outputs, or a ModelRunError naming what the head gave instead.
const at::Tensor& headOutput(const ModelOutputs& outputs, const char* name, Task task) {
  if (!outputs.contains(name))
    throw ModelRunError(fmt::format("the fine-tuned {} head gave no '{}' output", taskName(task), name));
  return outputs.get(name);
}

PoseInstance poseOfCrop(const at::Tensor& heatmaps, InputSize size) {
  const DecodedKeypoints decoded = decodeUdpHeatmaps(heatmaps[0], size);
  PoseInstance pose;
  pose.bbox = {0, 0, float(size.width - 1), float(size.height - 1)};
  pose.bboxSource = "full-image";
  pose.keypoints = decoded.inputPixels;
  pose.scores = decoded.scores;
  return pose;
}

}  // namespace

FrameResult FineTuner::predictFrame(std::size_t index) const {
  // Every sample's input is the input size (a stretched picture, a person's crop or a letterbox).
  const cv::Size size(settings().inputSize.width, settings().inputSize.height);
  const ModelOutputs outputs = predict(index);
  const Task task = model().task();
  FrameResult frame;
  frame.width = size.width;
  frame.height = size.height;
  switch (task) {
    case Task::Seg:
      frame.segLabels = segLabels(headOutput(outputs, "seg_logits", task), size).labels;
      break;
    case Task::Pose:
      frame.poses.push_back(
          poseOfCrop(headOutput(outputs, "pose_heatmaps", task), InputSize{size.width, size.height}));
      break;
    case Task::Normal:
      frame.normal = normalImage(headOutput(outputs, "normal", task), Padding{}, size);
      break;
    case Task::Albedo:
      frame.albedo = albedoImage(headOutput(outputs, "albedo", task), Padding{}, size);
      break;
    case Task::Pointmap: {
      const at::Tensor scale = headOutput(outputs, "scale", task).reshape({-1}).narrow(0, 0, 1);
      frame.pointmap =
          pointmapImage(metricPointmap(headOutput(outputs, "pointmap", task), scale), Padding{}, size);
      const float value = scale.to(at::kCPU, at::kFloat).item<float>();
      if (std::isfinite(value)) frame.pointmapScale = value;
      break;
    }
    case Task::Matting: {
      const Matte matte = matteImage(headOutput(outputs, "matting", task), size);
      frame.alpha = matte.alpha;
      frame.foreground = matte.foreground;
      break;
    }
    default:
      throw ModelRunError(fmt::format("a {} model has no head to predict with", taskName(task)));
  }
  return frame;
}

}  // namespace sapiens
