#include "sapiens/pipeline/image_inference.h"

#include "sapiens/model/model.h"
#include "sapiens/pipeline/pose_crop.h"
#include "sapiens/pipeline/pose_flip.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace sapiens {
namespace {

void requireTask(const Model& model, Task task, const char* what) {
  if (model.task() != task) {
    throw std::invalid_argument(fmt::format("{}: needs a {} model, got a {} model ({})", what, taskName(task),
                                            taskName(model.task()),
                                            model.source().empty() ? "random" : model.source()));
  }
}

cv::Size sizeOf(const cv::Mat& image) {
  return cv::Size(image.cols, image.rows);
}

}  // namespace

std::vector<PoseInstance> estimatePoses(const Model& model, const cv::Mat& bgr,
                                        std::vector<BoundingBox> boxes, const PoseOptions& options) {
  requireTask(model, Task::Pose, "estimatePoses");
  const bool wholePicture = boxes.empty();
  if (wholePicture) {
    boxes.push_back(
        BoundingBox{0.0f, 0.0f, static_cast<float>(bgr.cols - 1), static_cast<float>(bgr.rows - 1)});
  }
  const InputSize size = options.inputSize;
  const auto count = static_cast<std::int64_t>(boxes.size());
  std::vector<PoseCrop> crops;
  crops.reserve(boxes.size());
  at::Tensor input = at::empty({count, 3, size.height, size.width}, at::TensorOptions().dtype(at::kFloat));
  for (std::int64_t i = 0; i < count; ++i) {
    crops.push_back(poseCropFor(boxes[static_cast<std::size_t>(i)], size));
    normalizeImageInto(warpPoseCrop(bgr, crops.back(), size), input, i);
  }
  if (options.flipTest) input = at::cat({input, input.flip({3})}, 0);
  const at::Tensor output = model.forward(input).get("pose_heatmaps");
  at::Tensor heatmaps = output.narrow(0, 0, count);
  if (options.flipTest) {
    const auto& flipIndices = options.flipIndices.empty() ? defaultFlipIndices() : options.flipIndices;
    heatmaps = averageFlipTest(heatmaps, output.narrow(0, count, count), flipIndices);
  }

  std::vector<PoseInstance> poses(boxes.size());
  for (std::int64_t i = 0; i < count; ++i) {
    const DecodedKeypoints decoded = decodeUdpHeatmaps(heatmaps[i], size, options.refinement);
    PoseInstance& pose = poses[static_cast<std::size_t>(i)];
    pose.bbox = boxes[static_cast<std::size_t>(i)];
    pose.bboxSource = wholePicture ? "full-image" : "user";
    pose.scores = decoded.scores;
    pose.keypoints.reserve(decoded.inputPixels.size());
    for (const auto& point : decoded.inputPixels) {
      pose.keypoints.push_back(inputToImage(point, crops[static_cast<std::size_t>(i)], size));
    }
  }
  return poses;
}

SegResult segmentImage(const Model& model, const cv::Mat& bgr, InputSize inputSize, bool withProbabilities) {
  requireTask(model, Task::Seg, "segmentImage");
  const at::Tensor input = normalizeImage(stretchToInput(bgr, inputSize));
  const at::Tensor logits = model.forward(input).get("seg_logits");
  return segLabels(logits, sizeOf(bgr), withProbabilities);
}

cv::Mat estimateNormals(const Model& model, const cv::Mat& bgr, InputSize inputSize) {
  requireTask(model, Task::Normal, "estimateNormals");
  const Letterbox letterbox = letterboxToInput(bgr, inputSize);
  const at::Tensor normals = model.forward(normalizeImage(letterbox.image)).get("normal");
  return normalImage(normals, letterbox.padding, sizeOf(bgr));
}

cv::Mat estimateAlbedo(const Model& model, const cv::Mat& bgr, InputSize inputSize) {
  requireTask(model, Task::Albedo, "estimateAlbedo");
  const Letterbox letterbox = letterboxToInput(bgr, inputSize);
  const at::Tensor albedo = model.forward(normalizeImage(letterbox.image)).get("albedo");
  return albedoImage(albedo, letterbox.padding, sizeOf(bgr));
}

PointmapEstimate estimatePointmap(const Model& model, const cv::Mat& bgr, InputSize inputSize) {
  requireTask(model, Task::Pointmap, "estimatePointmap");
  const Letterbox letterbox = letterboxToInput(bgr, inputSize);
  const ModelOutputs outputs = model.forward(normalizeImage(letterbox.image));
  const at::Tensor& scale = outputs.get("scale");
  PointmapEstimate estimate;
  estimate.metric =
      pointmapImage(metricPointmap(outputs.get("pointmap"), scale), letterbox.padding, sizeOf(bgr));
  estimate.scale = scale.to(at::kCPU, at::kFloat).flatten()[0].item<float>();
  if (std::isfinite(estimate.scale) && estimate.scale > 0.0f) {
    estimate.intrinsics = intrinsicsFromScale(estimate.scale, letterbox.padding, inputSize, sizeOf(bgr));
  }
  return estimate;
}

void analyzeImage(const Model& model, const cv::Mat& bgr, FrameResult& frame,
                  const AnalysisOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  frame.width = bgr.cols;
  frame.height = bgr.rows;
  switch (model.task()) {
    case Task::Backbone:
      throw std::invalid_argument(fmt::format("analyzeImage: {} is a backbone without a task head",
                                              model.source().empty() ? "the model" : model.source()));
    case Task::Pose:
      frame.poses = estimatePoses(model, bgr, options.personBoxes, options.pose);
      break;
    case Task::Seg:
      frame.segLabels = segmentImage(model, bgr, options.inputSize).labels;
      break;
    case Task::Normal:
      frame.normal = estimateNormals(model, bgr, options.inputSize);
      break;
    case Task::Albedo:
      frame.albedo = estimateAlbedo(model, bgr, options.inputSize);
      break;
    case Task::Pointmap: {
      PointmapEstimate estimate = estimatePointmap(model, bgr, options.inputSize);
      frame.pointmap = estimate.metric;
      frame.pointmapScale = estimate.scale;
      frame.intrinsics = estimate.intrinsics;
      break;
    }
  }
  frame.inferenceMs[model.task()] =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace sapiens
