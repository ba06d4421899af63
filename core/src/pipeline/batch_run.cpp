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

std::string analyzeTask(const Model& model, const cv::Mat& bgr, FrameResult& frame, InputSize inputSize,
                        const std::vector<BoundingBox>& userBoxes) {
  AnalysisOptions analysis;
  analysis.inputSize = inputSize;
  analysis.pose.inputSize = inputSize;
  std::string boxSource;
  if (model.task() == Task::Pose) {
    PersonBoxRequest request;
    request.userBoxes = userBoxes;
    if (frame.has(Task::Seg)) request.segLabels = &frame.segLabels;
    for (const SourcedBox& b : choosePersonBoxes(bgr, request)) {
      analysis.personBoxes.push_back(b.box);
      boxSource = b.source;
    }
  }
  analyzeImage(model, bgr, frame, analysis);
  for (PoseInstance& pose : frame.poses)
    if (!boxSource.empty()) pose.bboxSource = boxSource;
  return boxSource;
}

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
  manifest["models"] = nlohmann::json::array();
  for (auto& m : models) manifest["models"].push_back(describeModel(m));
  manifest["task_errors"] = summary.taskErrors;
  summary.manifestPath = (fs::path(options.outputDir) / "results.json").string();

  const std::vector<PlannedInput> planned = planInputs(options.inputs, options.outputDir);
  for (std::size_t i = 0; i < planned.size(); ++i) {
    if (callbacks.isCancelled && callbacks.isCancelled()) {
      summary.cancelled = true;
      logger().warn("cancelled after {} of {} pictures", i, planned.size());
      break;
    }
    if (callbacks.onProgress) callbacks.onProgress({i, planned.size(), planned[i].path});
    InputOutcome outcome;
    outcome.input = planned[i].path;
    try {
      const cv::Mat bgr = readImageBgr(planned[i].path);
      FrameResult frame;
      for (const LoadedModel& m : models) {
        const std::string boxSource = analyzeTask(m.model, bgr, frame, m.inputSize, options.personBoxes);
        if (!boxSource.empty()) outcome.personBoxSource = boxSource;
      }
      outcome.inferenceMs = frame.inferenceMs;
      const std::string imageName = fs::path(planned[i].path).filename().string();
      exportResults(frame, bgr, planned[i].outputStem, imageName, options, outcome);
      outcome.ok = true;
    } catch (const std::exception& e) {
      outcome.error = e.what();
      logger().error("{}: {}", planned[i].path, e.what());
    }
    summary.inputs.push_back(std::move(outcome));
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
