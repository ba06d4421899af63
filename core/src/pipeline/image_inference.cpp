#include "pipeline/image_inference.h"

#include "pipeline/pose_crop.h"
#include "pipeline/pose_flip.h"
#include "sapiens/model/model.h"

#include "output_check.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <opencv2/core.hpp>
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

// Every picture pre-processed by `prepare` (to exactly `size`) into one (N, 3, H, W) batch.
template <class Prepare>
at::Tensor inputBatch(const std::vector<cv::Mat>& images, InputSize size, Prepare prepare) {
  at::Tensor input = at::empty({static_cast<std::int64_t>(images.size()), 3, size.height, size.width},
                               at::TensorOptions().dtype(at::kFloat));
  for (std::size_t i = 0; i < images.size(); ++i)
    normalizeImageInto(prepare(i, images[i]), input, static_cast<std::int64_t>(i));
  return input;
}

std::vector<std::vector<PoseInstance>> posesOf(const Model& model, const std::vector<cv::Mat>& images,
                                               const std::vector<std::vector<BoundingBox>>& boxesPerImage,
                                               const PoseOptions& options, std::vector<OutputCheck>& checks) {
  requireTask(model, Task::Pose, "estimatePoses");
  struct Person {
    std::size_t image;
    BoundingBox box;
    bool wholePicture;
    PoseCrop crop;
  };
  const InputSize size = options.inputSize;
  std::vector<Person> people;
  for (std::size_t i = 0; i < images.size(); ++i) {
    const cv::Mat& bgr = images[i];
    if (boxesPerImage[i].empty()) {
      const BoundingBox whole{0.0f, 0.0f, static_cast<float>(bgr.cols - 1), static_cast<float>(bgr.rows - 1)};
      people.push_back({i, whole, true, poseCropFor(whole, size)});
    }
    for (const BoundingBox& box : boxesPerImage[i]) people.push_back({i, box, false, poseCropFor(box, size)});
  }
  std::vector<cv::Mat> crops;
  crops.reserve(people.size());
  for (const Person& person : people) crops.push_back(warpPoseCrop(images[person.image], person.crop, size));
  const auto count = static_cast<std::int64_t>(people.size());
  at::Tensor input = inputBatch(crops, size, [](std::size_t, const cv::Mat& crop) { return crop; });
  if (options.flipTest) input = at::cat({input, input.flip({3})}, 0);
  const at::Tensor output = model.forward(input).get("pose_heatmaps");
  at::Tensor heatmaps = output.narrow(0, 0, count);
  if (options.flipTest) {
    const auto& flipIndices = options.flipIndices.empty() ? defaultFlipIndices() : options.flipIndices;
    heatmaps = averageFlipTest(heatmaps, output.narrow(0, count, count), flipIndices);
  }

  std::vector<std::vector<PoseInstance>> poses(images.size());
  checks.assign(images.size(), OutputCheck{});
  for (std::int64_t i = 0; i < count; ++i) {
    const Person& person = people[static_cast<std::size_t>(i)];
    checks[person.image] += checkOutput(heatmaps[i]);
    const DecodedKeypoints decoded = decodeUdpHeatmaps(heatmaps[i], size, options.refinement);
    PoseInstance pose;
    pose.bbox = person.box;
    pose.bboxSource = person.wholePicture ? "full-image" : "user";
    pose.scores = decoded.scores;
    pose.keypoints.reserve(decoded.inputPixels.size());
    for (const auto& point : decoded.inputPixels)
      pose.keypoints.push_back(inputToImage(point, person.crop, size));
    poses[person.image].push_back(std::move(pose));
  }
  return poses;
}

// A stretched task (seg, matting): every picture stretched to the input, one forward pass, output `name`
// of every picture back to its own pixels by `toImage(item, picture size)`.
template <class ToImage>
auto stretchedMaps(const Model& model, const std::vector<cv::Mat>& images, InputSize inputSize,
                   StretchEnlarge enlarge, const char* name, ToImage toImage,
                   std::vector<OutputCheck>& checks) {
  const at::Tensor input = inputBatch(images, inputSize, [&](std::size_t, const cv::Mat& bgr) {
    return stretchToInput(bgr, inputSize, enlarge);
  });
  const at::Tensor maps = model.forward(input).get(name);
  std::vector<decltype(toImage(maps, cv::Size()))> out;
  checks.clear();
  for (std::size_t i = 0; i < images.size(); ++i) {
    const at::Tensor item = batchItem(maps, static_cast<std::int64_t>(i));
    checks.push_back(checkOutput(item));
    out.push_back(toImage(item, sizeOf(images[i])));
  }
  return out;
}

std::vector<cv::Mat> segLabelsOf(const Model& model, const std::vector<cv::Mat>& images, InputSize inputSize,
                                 std::vector<OutputCheck>& checks) {
  requireTask(model, Task::Seg, "segmentImage");
  return stretchedMaps(
      model, images, inputSize, StretchEnlarge::Cubic, "seg_logits",
      [](const at::Tensor& logits, cv::Size size) { return segLabels(logits, size).labels; }, checks);
}

std::vector<Matte> mattesOf(const Model& model, const std::vector<cv::Mat>& images, InputSize inputSize,
                            std::vector<OutputCheck>& checks) {
  requireTask(model, Task::Matting, "estimateMatte");
  return stretchedMaps(model, images, inputSize, StretchEnlarge::Linear, "matting", matteImage, checks);
}

// Letterboxes every picture and runs the model once; `images` and `letterboxes` correspond.
ModelOutputs letterboxedForward(const Model& model, const std::vector<cv::Mat>& images, InputSize inputSize,
                                std::vector<Letterbox>& letterboxes) {
  letterboxes.clear();
  for (const cv::Mat& bgr : images) letterboxes.push_back(letterboxToInput(bgr, inputSize));
  return model.forward(
      inputBatch(images, inputSize, [&](std::size_t i, const cv::Mat&) { return letterboxes[i].image; }));
}

// A letterboxed dense task (normal, albedo): output `name` of every picture back to its own pixels.
template <class ToImage>
std::vector<cv::Mat> letterboxedMaps(const Model& model, const std::vector<cv::Mat>& images,
                                     InputSize inputSize, const char* name, ToImage toImage,
                                     std::vector<OutputCheck>& checks) {
  std::vector<Letterbox> letterboxes;
  const at::Tensor maps = letterboxedForward(model, images, inputSize, letterboxes).get(name);
  std::vector<cv::Mat> out;
  checks.clear();
  for (std::size_t i = 0; i < images.size(); ++i) {
    const at::Tensor item = batchItem(maps, static_cast<std::int64_t>(i));
    checks.push_back(checkOutput(item));
    out.push_back(toImage(item, letterboxes[i].padding, sizeOf(images[i])));
  }
  return out;
}

std::vector<cv::Mat> normalsOf(const Model& model, const std::vector<cv::Mat>& images, InputSize inputSize,
                               std::vector<OutputCheck>& checks) {
  requireTask(model, Task::Normal, "estimateNormals");
  return letterboxedMaps(model, images, inputSize, "normal", normalImage, checks);
}

std::vector<cv::Mat> albedoOf(const Model& model, const std::vector<cv::Mat>& images, InputSize inputSize,
                              std::vector<OutputCheck>& checks) {
  requireTask(model, Task::Albedo, "estimateAlbedo");
  return letterboxedMaps(model, images, inputSize, "albedo", albedoImage, checks);
}

std::vector<PointmapEstimate> pointmapsOf(const Model& model, const std::vector<cv::Mat>& images,
                                          InputSize inputSize, std::vector<OutputCheck>& checks) {
  requireTask(model, Task::Pointmap, "estimatePointmap");
  std::vector<Letterbox> letterboxes;
  const ModelOutputs outputs = letterboxedForward(model, images, inputSize, letterboxes);
  const at::Tensor scales = outputs.get("scale").reshape({-1});
  const at::Tensor& pointmaps = outputs.get("pointmap");
  std::vector<PointmapEstimate> out(images.size());
  checks.clear();
  for (std::size_t i = 0; i < images.size(); ++i) {
    const auto item = static_cast<std::int64_t>(i);
    const at::Tensor scale = scales.narrow(0, item, 1);
    PointmapEstimate& estimate = out[i];
    // Checked after the division: a scale that is not finite spoils every point.
    const at::Tensor metric = metricPointmap(batchItem(pointmaps, item), scale);
    checks.push_back(checkOutput(metric));
    estimate.metric = pointmapImage(metric, letterboxes[i].padding, sizeOf(images[i]));
    estimate.scale = scale.to(at::kCPU, at::kFloat).item<float>();
    if (std::isfinite(estimate.scale) && estimate.scale > 0.0f) {
      estimate.intrinsics =
          intrinsicsFromScale(estimate.scale, letterboxes[i].padding, inputSize, sizeOf(images[i]));
    }
  }
  return out;
}

// A normal map whose every pixel is a zero vector (finite but without direction: raw outputs so large that
// their length overflows) holds nothing.
bool hasAnyNormal(const cv::Mat& normal) {
  return !normal.empty() && cv::countNonZero(normal.reshape(1)) > 0;
}

}  // namespace

std::vector<PoseInstance> estimatePoses(const Model& model, const cv::Mat& bgr,
                                        std::vector<BoundingBox> boxes, const PoseOptions& options) {
  std::vector<OutputCheck> checks;
  return posesOf(model, {bgr}, {std::move(boxes)}, options, checks).front();
}

SegResult segmentImage(const Model& model, const cv::Mat& bgr, InputSize inputSize, bool withProbabilities) {
  requireTask(model, Task::Seg, "segmentImage");
  const at::Tensor input = normalizeImage(stretchToInput(bgr, inputSize));
  const at::Tensor logits = model.forward(input).get("seg_logits");
  return segLabels(logits, sizeOf(bgr), withProbabilities);
}

cv::Mat estimateNormals(const Model& model, const cv::Mat& bgr, InputSize inputSize) {
  std::vector<OutputCheck> checks;
  return normalsOf(model, {bgr}, inputSize, checks).front();
}

cv::Mat estimateAlbedo(const Model& model, const cv::Mat& bgr, InputSize inputSize) {
  std::vector<OutputCheck> checks;
  return albedoOf(model, {bgr}, inputSize, checks).front();
}

PointmapEstimate estimatePointmap(const Model& model, const cv::Mat& bgr, InputSize inputSize) {
  std::vector<OutputCheck> checks;
  return pointmapsOf(model, {bgr}, inputSize, checks).front();
}

Matte estimateMatte(const Model& model, const cv::Mat& bgr, InputSize inputSize) {
  std::vector<OutputCheck> checks;
  return mattesOf(model, {bgr}, inputSize, checks).front();
}

void analyzeImages(const Model& model, const std::vector<cv::Mat>& images,
                   const std::vector<FrameResult*>& frames, const AnalysisOptions& options,
                   const std::vector<std::vector<BoundingBox>>& personBoxes) {
  if (frames.size() != images.size() || (!personBoxes.empty() && personBoxes.size() != images.size())) {
    throw std::invalid_argument(fmt::format("analyzeImages: {} pictures, {} frames and {} box lists",
                                            images.size(), frames.size(), personBoxes.size()));
  }
  if (images.empty()) return;
  const auto start = std::chrono::steady_clock::now();
  std::vector<OutputCheck> checks;
  auto accept = [&](std::size_t i) { return acceptOutput(*frames[i], model.task(), checks[i]); };
  switch (model.task()) {
    case Task::Backbone:
      throw std::invalid_argument(fmt::format("analyzeImage: {} is a backbone without a task head",
                                              model.source().empty() ? "the model" : model.source()));
    case Task::Pose: {
      const auto poses =
          posesOf(model, images,
                  personBoxes.empty() ? std::vector<std::vector<BoundingBox>>(images.size()) : personBoxes,
                  options.pose, checks);
      for (std::size_t i = 0; i < images.size(); ++i)
        if (accept(i)) frames[i]->poses = poses[i];
      break;
    }
    case Task::Seg: {
      const auto labels = segLabelsOf(model, images, options.inputSize, checks);
      for (std::size_t i = 0; i < images.size(); ++i)
        if (accept(i)) frames[i]->segLabels = labels[i];
      break;
    }
    case Task::Normal: {
      const auto normals = normalsOf(model, images, options.inputSize, checks);
      for (std::size_t i = 0; i < images.size(); ++i) {
        if (!accept(i)) continue;
        if (hasAnyNormal(normals[i]))
          frames[i]->normal = normals[i];
        else
          frames[i]->taskErrors[Task::Normal] =
              "the normal model gave no direction at any pixel (every normal is a zero vector): its "
              "output is too large or too small to normalise";
      }
      break;
    }
    case Task::Albedo: {
      const auto albedo = albedoOf(model, images, options.inputSize, checks);
      for (std::size_t i = 0; i < images.size(); ++i)
        if (accept(i)) frames[i]->albedo = albedo[i];
      break;
    }
    case Task::Pointmap: {
      const auto estimates = pointmapsOf(model, images, options.inputSize, checks);
      for (std::size_t i = 0; i < images.size(); ++i) {
        if (!accept(i)) continue;
        frames[i]->pointmap = estimates[i].metric;
        frames[i]->pointmapScale = estimates[i].scale;
        frames[i]->intrinsics = estimates[i].intrinsics;
      }
      break;
    }
    case Task::Matting: {
      const auto mattes = mattesOf(model, images, options.inputSize, checks);
      for (std::size_t i = 0; i < images.size(); ++i) {
        if (!accept(i)) continue;
        frames[i]->alpha = mattes[i].alpha;
        frames[i]->foreground = mattes[i].foreground;
      }
      break;
    }
  }
  const double share =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
      static_cast<double>(images.size());
  for (std::size_t i = 0; i < images.size(); ++i) {
    frames[i]->width = images[i].cols;
    frames[i]->height = images[i].rows;
    frames[i]->inferenceMs[model.task()] = share;
  }
}

void analyzeImage(const Model& model, const cv::Mat& bgr, FrameResult& frame,
                  const AnalysisOptions& options) {
  analyzeImages(model, {bgr}, {&frame}, options, {options.personBoxes});
}

}  // namespace sapiens
