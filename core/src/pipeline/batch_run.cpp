#include "sapiens/pipeline/batch_run.h"

#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/common/version.h"
#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/exr.h"
#include "sapiens/export/image_file.h"
#include "sapiens/export/keypoint_metadata.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/map_png.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/export/npy.h"
#include "sapiens/export/overlay.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/export/seg_classes.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/media/image_io.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/checkpoint_locator.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/pipeline/image_inference.h"
#include "sapiens/pipeline/person_boxes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>

namespace sapiens {
namespace fs = std::filesystem;

namespace {

constexpr Task kTaskOrder[] = {Task::Seg, Task::Pose, Task::Normal, Task::Albedo, Task::Pointmap};

struct LoadedModel {
  Task task;
  std::string path;
  Model model;
  InputSize inputSize;
};

struct PlannedInput {
  std::string path;
  std::string outputStem;  ///< outputDir/<relative folder>/<stem>
};

// Output stems mirror the folder structure below each input folder; stems that would collide (two
// pictures given with the same name) get a numeric suffix.
std::vector<PlannedInput> planInputs(const std::vector<std::string>& inputs, const std::string& outputDir) {
  std::vector<PlannedInput> planned;
  std::set<std::string> used;
  std::error_code ec;
  for (const std::string& input : inputs) {
    std::vector<std::pair<std::string, fs::path>> files;  // (file, relative stem)
    if (fs::is_directory(input, ec)) {
      for (const std::string& file : listImages(input, true))
        files.emplace_back(file, fs::relative(file, input, ec).replace_extension());
    } else {
      files.emplace_back(input, fs::path(input).stem());
    }
    for (auto& [file, rel] : files) {
      std::string stem = (fs::path(outputDir) / rel).string();
      for (int n = 2; used.count(stem); ++n)
        stem = (fs::path(outputDir) / rel).string() + "-" + std::to_string(n);
      used.insert(stem);
      planned.push_back({file, stem});
    }
  }
  return planned;
}

nlohmann::json describeModel(const LoadedModel& m) {
  const Architecture& arch = m.model.architecture();
  auto official = officialName(arch);
  return {{"task", std::string(taskName(m.task))},
          {"path", m.path},
          {"architecture", official ? *official : "custom"},
          {"backbone", describeBackbone(arch.backbone)},
          {"head", describeHead(arch.task, arch.head)},
          {"input_size", {m.inputSize.height, m.inputSize.width}}};
}

void exportResults(const FrameResult& frame, const cv::Mat& bgr, const std::string& stem,
                   const std::string& imageName, const BatchRunOptions& options, InputOutcome& outcome) {
  fs::create_directories(fs::path(stem).parent_path());
  auto out = [&](const std::string& kind, const std::string& suffix) {
    std::string path = stem + suffix;
    outcome.outputs[kind] = path;
    return path;
  };
  if (frame.has(Task::Seg)) {
    writeLabelPng(out("seg", ".seg.png"), frame.segLabels);
    if (options.overlays)
      writeSegmentationOverlay(out("seg_overlay", ".seg_overlay.png"), bgr, frame.segLabels, seg29());
  }
  if (frame.has(Task::Pose)) {
    KeypointPredictions predictions;
    predictions.imageHeight = frame.height;
    predictions.imageWidth = frame.width;
    predictions.numKeypoints = static_cast<int>(keypoints308().size());
    predictions.keypointThreshold = options.keypointThreshold;
    predictions.frames.push_back({imageName, frame.poses});
    writeKeypointsJson(out("pose", ".pose.json"), predictions);
    writeCocoKeypoints(out("pose_coco", ".pose.coco.json"), predictions, keypoints308());
    if (options.overlays) {
      cv::Mat overlay = bgr.clone();
      drawPoses(overlay, frame.poses, keypoints308(),
                poseDrawStyleFor(overlay.size(), options.keypointThreshold));
      writeImageFile(out("pose_overlay", ".pose_overlay.png"), overlay);
    }
  }
  const cv::Mat foreground = frame.has(Task::Seg) ? frame.segLabels : cv::Mat();
  if (frame.has(Task::Normal)) {
    writeNormalPng(out("normal", ".normal.png"), frame.normal, foreground);
    writeNpy(out("normal_npy", ".normal.npy"), frame.normal);
  }
  if (frame.has(Task::Albedo)) {
    writeAlbedoPng(out("albedo", ".albedo.png"), frame.albedo, foreground);
    writeNpy(out("albedo_npy", ".albedo.npy"), frame.albedo);
  }
  if (frame.has(Task::Pointmap)) {
    writeNpy(out("pointmap_npy", ".pointmap.npy"), frame.pointmap);
    writeDepthPng(out("depth", ".depth.png"), frame.pointmap, foreground);
    if (exrWritingSupported()) writeExr(out("pointmap_exr", ".pointmap.exr"), frame.pointmap);
    PointCloudOptions cloudOptions;
    cloudOptions.withFaces = options.plyFaces;
    writePly(out("ply", ".ply"), buildPointCloud(frame, bgr, cloudOptions), options.plyEncoding);
  }
}

}  // namespace

std::size_t BatchSummary::failedCount() const {
  return static_cast<std::size_t>(std::count_if(inputs.begin(), inputs.end(), [](auto& i) { return !i.ok; }));
}

std::vector<std::string> expandInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (auto& p : planInputs(inputs, "")) files.push_back(p.path);
  return files;
}

InputSize defaultInputSize(const Model& model) {
  const Architecture& arch = model.architecture();
  const InputSize official{768, 1024};
  if (arch.task != Task::Pointmap || arch.head.scaleMlp.empty() || arch.head.scaleConvChannels.empty())
    return official;
  // The scale branch flattens (channels x grid) after stride-2 1x1 convolutions: ceil(n / 2) per layer.
  const int cells = arch.head.scaleMlp.front() / arch.head.scaleConvChannels.back();
  const int patch =
      arch.backbone.patchSize * (arch.backbone.tokenizer.layers > 0 ? arch.backbone.tokenizer.windowSize : 1);
  auto cellsFor = [&](int m) {
    int h = 4 * m, w = 3 * m;
    for (size_t i = 0; i < arch.head.scaleConvChannels.size(); ++i) h = (h + 1) / 2, w = (w + 1) / 2;
    return h * w;
  };
  if (cellsFor(16) == cells) return official;
  for (int m = 1; m <= 256; ++m)
    if (cellsFor(m) == cells) return {3 * m * patch, 4 * m * patch};
  return official;
}

std::vector<std::string> analyzeTaskBatch(const Model& model, const std::vector<cv::Mat>& images,
                                          const std::vector<FrameResult*>& frames, InputSize inputSize,
                                          const std::vector<BoundingBox>& userBoxes) {
  AnalysisOptions analysis;
  analysis.inputSize = inputSize;
  analysis.pose.inputSize = inputSize;
  std::vector<std::string> boxSources(images.size());
  std::vector<std::vector<BoundingBox>> personBoxes(images.size());
  if (model.task() == Task::Pose) {
    for (std::size_t i = 0; i < images.size(); ++i) {
      PersonBoxRequest request;
      request.userBoxes = userBoxes;
      if (frames[i]->has(Task::Seg)) request.segLabels = &frames[i]->segLabels;
      for (const SourcedBox& b : choosePersonBoxes(images[i], request)) {
        personBoxes[i].push_back(b.box);
        boxSources[i] = b.source;
      }
    }
  }
  analyzeImages(model, images, frames, analysis, personBoxes);
  for (std::size_t i = 0; i < images.size(); ++i)
    for (PoseInstance& pose : frames[i]->poses)
      if (!boxSources[i].empty()) pose.bboxSource = boxSources[i];
  return boxSources;
}

std::string analyzeTask(const Model& model, const cv::Mat& bgr, FrameResult& frame, InputSize inputSize,
                        const std::vector<BoundingBox>& userBoxes) {
  return analyzeTaskBatch(model, {bgr}, {&frame}, inputSize, userBoxes).front();
}

namespace {

// Every model, in task order, on the decoded pictures of one group in one forward pass each. Should a
// batched pass fail, the pictures go through one by one so that only the culprit fails.
void runModelsOnGroup(const std::vector<LoadedModel>& models, const std::vector<cv::Mat>& images,
                      const std::vector<std::size_t>& slots, std::vector<FrameResult>& frames,
                      std::vector<InputOutcome>& outcomes, const std::vector<BoundingBox>& userBoxes) {
  auto noteBoxes = [&](std::size_t slot, const std::string& source) {
    if (!source.empty()) outcomes[slot].personBoxSource = source;
  };
  for (const LoadedModel& m : models) {
    std::vector<cv::Mat> batchImages;
    std::vector<FrameResult*> batchFrames;
    std::vector<std::size_t> batchSlots;
    for (std::size_t k = 0; k < slots.size(); ++k) {
      if (!outcomes[slots[k]].error.empty()) continue;
      batchImages.push_back(images[k]);
      batchFrames.push_back(&frames[slots[k]]);
      batchSlots.push_back(slots[k]);
    }
    if (batchImages.empty()) return;
    try {
      const auto sources = analyzeTaskBatch(m.model, batchImages, batchFrames, m.inputSize, userBoxes);
      for (std::size_t k = 0; k < batchSlots.size(); ++k) noteBoxes(batchSlots[k], sources[k]);
      continue;
    } catch (const std::exception& e) {
      if (batchImages.size() == 1) {
        outcomes[batchSlots.front()].error = e.what();
        logger().error("{}: {}", outcomes[batchSlots.front()].input, e.what());
        continue;
      }
      logger().warn("{} on {} pictures at once failed ({}); running them one by one", taskName(m.task),
                    batchImages.size(), e.what());
    }
    for (std::size_t k = 0; k < batchSlots.size(); ++k) {
      try {
        noteBoxes(batchSlots[k],
                  analyzeTask(m.model, batchImages[k], *batchFrames[k], m.inputSize, userBoxes));
      } catch (const std::exception& e) {
        outcomes[batchSlots[k]].error = e.what();
        logger().error("{}: {}", outcomes[batchSlots[k]].input, e.what());
      }
    }
  }
}

}  // namespace

BatchSummary runBatch(const BatchRunOptions& options, const BatchCallbacks& callbacks) {
  const auto started = std::chrono::steady_clock::now();
  BatchSummary summary;
  if (options.tasks.empty())
    throw std::invalid_argument("no task chosen (pose, seg, normal, albedo, pointmap)");
  std::error_code ec;
  fs::create_directories(options.outputDir, ec);
  if (ec || !fs::is_directory(options.outputDir))
    throw IoError("cannot create the output folder " + options.outputDir + ": " + ec.message());

  const std::string modelDir = options.modelDir.empty() ? paths::checkpointRoot() : options.modelDir;
  ModelOptions modelOptions;
  modelOptions.device = options.device;
  if (!options.dtype.empty()) modelOptions.dtype = parseComputeDtype(options.dtype);

  std::vector<LoadedModel> models;
  for (Task task : kTaskOrder) {
    if (std::find(options.tasks.begin(), options.tasks.end(), task) == options.tasks.end()) continue;
    std::string path;
    if (auto it = options.modelPaths.find(task); it != options.modelPaths.end()) {
      path = it->second;
    } else {
      CheckpointSearch search = findCheckpoint(modelDir, task, options.size);
      if (!search.found) {
        summary.taskErrors.push_back("no " + std::string(taskName(task)) + " checkpoint found under " +
                                     modelDir + " (looked for " + search.looked.front() +
                                     " and other official sizes)");
        logger().error("{}", summary.taskErrors.back());
        continue;
      }
      path = *search.found;
    }
    try {
      ModelOptions o = modelOptions;
      o.expectedTask = task;
      Model model = Model::load(path, o);
      InputSize size = options.inputSize ? *options.inputSize : defaultInputSize(model);
      logger().info("{} model: {} ({}, {} on {})", taskName(task), path,
                    officialName(model.architecture()).value_or("custom architecture"),
                    computeDtypeName(model.dtype()), model.device().str());
      models.push_back({task, path, std::move(model), size});
      summary.tasksRun.push_back(task);
    } catch (const std::exception& e) {
      summary.taskErrors.push_back(std::string(taskName(task)) + ": " + e.what());
      logger().error("{}", summary.taskErrors.back());
    }
  }
  if (models.empty()) throw std::runtime_error("no model could be loaded: " + summary.taskErrors.front());

  nlohmann::json manifest;
  manifest["tool"] = "sapiens-cli " + versionString();
  manifest["device"] = models.front().model.device().str();
  manifest["dtype"] = computeDtypeName(models.front().model.dtype());
  manifest["batch_size"] = std::max<std::size_t>(1, options.batchSize);
  manifest["models"] = nlohmann::json::array();
  for (auto& m : models) manifest["models"].push_back(describeModel(m));
  manifest["task_errors"] = summary.taskErrors;
  summary.manifestPath = (fs::path(options.outputDir) / "results.json").string();

  const std::vector<PlannedInput> planned = planInputs(options.inputs, options.outputDir);
  const std::size_t batchSize = std::max<std::size_t>(1, options.batchSize);
  for (std::size_t first = 0; first < planned.size(); first += batchSize) {
    if (callbacks.isCancelled && callbacks.isCancelled()) {
      summary.cancelled = true;
      logger().warn("cancelled after {} of {} pictures", first, planned.size());
      break;
    }
    if (callbacks.onProgress) callbacks.onProgress({first, planned.size(), planned[first].path});
    const std::size_t end = std::min(planned.size(), first + batchSize);
    std::vector<InputOutcome> outcomes(end - first);
    std::vector<cv::Mat> images;
    std::vector<FrameResult> frames(end - first);
    std::vector<std::size_t> readable;  // indices into outcomes/frames of pictures that decoded
    for (std::size_t i = first; i < end; ++i) {
      InputOutcome& outcome = outcomes[i - first];
      outcome.input = planned[i].path;
      try {
        images.push_back(readImageBgr(planned[i].path));
        readable.push_back(i - first);
      } catch (const std::exception& e) {
        outcome.error = e.what();
        logger().error("{}: {}", planned[i].path, e.what());
      }
    }
    runModelsOnGroup(models, images, readable, frames, outcomes, options.personBoxes);
    for (std::size_t k = 0; k < readable.size(); ++k) {
      const std::size_t slot = readable[k];
      InputOutcome& outcome = outcomes[slot];
      if (!outcome.error.empty()) continue;
      try {
        outcome.inferenceMs = frames[slot].inferenceMs;
        const std::string imageName = fs::path(outcome.input).filename().string();
        exportResults(frames[slot], images[k], planned[first + slot].outputStem, imageName, options, outcome);
        outcome.ok = true;
      } catch (const std::exception& e) {
        outcome.error = e.what();
        logger().error("{}: {}", outcome.input, e.what());
      }
    }
    for (InputOutcome& outcome : outcomes) summary.inputs.push_back(std::move(outcome));
  }
  if (callbacks.onProgress) callbacks.onProgress({planned.size(), planned.size(), ""});

  manifest["inputs"] = nlohmann::json::array();
  for (const InputOutcome& o : summary.inputs) {
    nlohmann::json entry = {{"input", o.input}, {"status", o.ok ? "ok" : "failed"}};
    if (!o.ok) entry["error"] = o.error;
    entry["outputs"] = o.outputs;
    for (auto& [task, ms] : o.inferenceMs) entry["timings_ms"][std::string(taskName(task))] = ms;
    if (!o.personBoxSource.empty()) entry["person_boxes"] = o.personBoxSource;
    manifest["inputs"].push_back(std::move(entry));
  }
  manifest["succeeded"] = summary.inputs.size() - summary.failedCount();
  manifest["failed"] = summary.failedCount();
  manifest["cancelled"] = summary.cancelled;
  manifest["elapsed_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  writeFileAtomically(summary.manifestPath, manifest.dump(2) + "\n");
  return summary;
}

}  // namespace sapiens
