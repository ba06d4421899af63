#include "sapiens/run/batch_run.h"

#include "run_manifest.h"

#include "pipeline/image_inference.h"
#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/common/resource_usage.h"
#include "sapiens/common/threads.h"
#include "sapiens/common/version.h"
#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/exr.h"
#include "sapiens/export/image_file.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/map_png.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/export/npy.h"
#include "sapiens/export/overlay.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/media/image_io.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/checkpoint_locator.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/demo_weights.h"
#include "sapiens/model/model.h"
#include "sapiens/pipeline/person_boxes.h"
#include "sapiens/pipeline/task_models.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"
#include "sapiens/run/frame_export.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <set>

namespace sapiens {
namespace fs = std::filesystem;

namespace {

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

}  // namespace

std::size_t BatchSummary::failedCount() const {
  return static_cast<std::size_t>(std::count_if(inputs.begin(), inputs.end(), [](auto& i) { return !i.ok; }));
}

std::size_t BatchSummary::partialCount() const {
  return static_cast<std::size_t>(
      std::count_if(inputs.begin(), inputs.end(), [](auto& i) { return i.ok && !i.taskErrors.empty(); }));
}

std::vector<std::string> expandInputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (auto& p : planInputs(inputs, "")) files.push_back(p.path);
  return files;
}

namespace {

// Pictures first..end-1 of the plan: those that decoded (images[k] is picture first + readable[k]), their
// results and their outcomes.
struct PictureGroup {
  std::size_t first = 0, end = 0;
  std::vector<cv::Mat> images;
  std::vector<std::size_t> readable;
  std::vector<FrameResult> frames;
  std::vector<InputOutcome> outcomes;
};

// Every model, in task order, on the decoded pictures of one group in one forward pass each. Should a
// batched pass fail, the pictures go through one by one so that only the culprit fails, and only in that
// task: its error goes into the picture's frame and the later tasks still run on it.
void runModelsOnGroup(const std::vector<LoadedTaskModel>& models, const std::vector<cv::Mat>& images,
                      const std::vector<std::size_t>& slots, std::vector<FrameResult>& frames,
                      std::vector<InputOutcome>& outcomes, const std::vector<BoundingBox>& userBoxes) {
  auto noteBoxes = [&](std::size_t slot, const std::string& source) {
    if (!source.empty()) outcomes[slot].personBoxSource = source;
  };
  std::vector<FrameResult*> groupFrames;
  for (std::size_t slot : slots) groupFrames.push_back(&frames[slot]);
  if (images.empty()) return;
  for (const LoadedTaskModel& m : models) {
    try {
      const auto sources = analyzeTaskBatch(m.model.model(), images, groupFrames, m.inputSize, userBoxes);
      for (std::size_t k = 0; k < slots.size(); ++k) noteBoxes(slots[k], sources[k]);
      continue;
    } catch (const std::exception& e) {
      if (images.size() == 1) {
        groupFrames.front()->taskErrors[m.task] = e.what();
        continue;
      }
      logger().warn("{} on {} pictures at once failed ({}); running them one by one", taskName(m.task),
                    images.size(), e.what());
    }
    for (std::size_t k = 0; k < slots.size(); ++k) {
      try {
        noteBoxes(slots[k], analyzeTask(m.model.model(), images[k], *groupFrames[k], m.inputSize, userBoxes));
      } catch (const std::exception& e) {
        groupFrames[k]->taskErrors[m.task] = e.what();
      }
    }
  }
}

// The picture's task failures and warnings, from its frame into its outcome and the log. Returns false
// when every task failed: then the picture has failed, with their reasons as its error.
bool takeTaskProblems(const FrameResult& frame, std::size_t tasks, InputOutcome& outcome) {
  outcome.taskErrors = frame.taskErrors;
  outcome.warnings = frame.warnings;
  outcome.nonFiniteValues = frame.nonFiniteValues;
  for (const auto& [task, warning] : frame.warnings) logger().warn("{}: {}", outcome.input, warning);
  for (const auto& [task, error] : frame.taskErrors)
    logger().error("{}: {} failed: {}", outcome.input, taskName(task), error);
  if (frame.taskErrors.size() < tasks) return true;
  outcome.error = frame.taskErrors.size() == 1 ? frame.taskErrors.begin()->second
                                               : "every task failed: " + taskErrorsText(frame.taskErrors);
  outcome.taskErrors.clear();
  return false;
}

// What the reading, analysing and exporting of the groups share.
struct GroupedRun {
  GroupedRun(const BatchRunOptions& o, const std::vector<LoadedTaskModel>& m, std::vector<PlannedInput> p)
      : options(o), models(m), planned(std::move(p)) {}

  const BatchRunOptions& options;
  const std::vector<LoadedTaskModel>& models;
  std::vector<PlannedInput> planned;
  FrameExportOptions exports;
  std::size_t batchSize = 1;
  int helperNiceness = 0;
  std::atomic<bool> stopReading{false};  // a cancellation: the read ahead stops at its next picture

  PictureGroup read(std::size_t first, bool helperThread) const {
    if (helperThread) threads::lowerThisThreadPriority(helperNiceness);
    PictureGroup group;
    group.first = first;
    group.end = std::min(planned.size(), first + batchSize);
    group.outcomes.resize(group.end - first);
    group.frames.resize(group.end - first);
    for (std::size_t i = first; i < group.end && !stopReading; ++i) {
      InputOutcome& outcome = group.outcomes[i - first];
      outcome.input = planned[i].path;
      try {
        group.images.push_back(readImageBgr(planned[i].path));
        group.readable.push_back(i - first);
      } catch (const std::exception& e) {
        outcome.error = e.what();
        logger().error("{}: {}", planned[i].path, e.what());
      }
    }
    return group;
  }

  // Writes the results of one picture of `group` (its picture handed over); the outcome says how it went.
  void exportOne(PictureGroup& group, std::size_t k) const {
    const std::size_t slot = group.readable[k];
    InputOutcome& outcome = group.outcomes[slot];
    if (!outcome.error.empty() || !takeTaskProblems(group.frames[slot], models.size(), outcome)) return;
    try {
      outcome.inferenceMs = group.frames[slot].inferenceMs;
      const std::string imageName = fs::path(outcome.input).filename().string();
      outcome.outputs =
          exportFrameConsumingPicture(group.frames[slot], std::move(group.images[k]),
                                      planned[group.first + slot].outputStem, imageName, exports);
      outcome.ok = true;
    } catch (const std::exception& e) {
      outcome.error = e.what();
      logger().error("{}: {}", outcome.input, e.what());
    } catch (...) {
      outcome.error = "the export failed with an unknown error";
      logger().error("{}: {}", outcome.input, outcome.error);
    }
  }

  std::vector<InputOutcome> exportGroup(PictureGroup group) const {
    threads::lowerThisThreadPriority(helperNiceness);
    for (std::size_t k = 0; k < group.readable.size(); ++k) exportOne(group, k);
    return std::move(group.outcomes);
  }
};

// The part of `planned` that `shard` takes (all when none), noted in the manifest.
std::vector<PlannedInput> shardOf(std::vector<PlannedInput> planned, const std::optional<Shard>& shard,
                                  nlohmann::json& manifest) {
  if (!shard) return planned;
  const std::size_t total = planned.size();
  const auto [begin, end] = shardRange(*shard, total);
  manifest["shard"] = {{"index", shard->index + 1}, {"count", shard->count}, {"inputs_total", total}};
  logger().info("shard {} of {}: pictures {} to {} of {}", shard->index + 1, shard->count, begin + 1, end,
                total);
  return std::vector<PlannedInput>(planned.begin() + static_cast<std::ptrdiff_t>(begin),
                                   planned.begin() + static_cast<std::ptrdiff_t>(end));
}

// Three groups in flight: the next one is read and the previous one exported on helper threads (below
// the analyser's priority) while the models run on the current one, as long as those two stay within
// options.overlapBytes; otherwise that group's analysis waits for them (the serial run's peak memory).
void analyseGroups(GroupedRun& run, const BatchCallbacks& callbacks, BatchSummary& summary) {
  const std::vector<PlannedInput>& planned = run.planned;
  const std::size_t overlapBytes = run.options.overlapBytes;
  auto readAhead = [&run](std::size_t first) {
    return std::async(std::launch::async, [&run, first] { return run.read(first, true); });
  };
  std::future<PictureGroup> reading;
  if (!planned.empty()) reading = readAhead(0);
  std::future<std::vector<InputOutcome>> exporting;
  std::size_t exportingBytes = 0;  // the pictures and results of the group being written
  auto collectExports = [&] {
    exportingBytes = 0;
    if (!exporting.valid()) return;
    for (InputOutcome& outcome : exporting.get()) summary.inputs.push_back(std::move(outcome));
  };
  for (std::size_t first = 0; first < planned.size(); first += run.batchSize) {
    if (callbacks.isCancelled && callbacks.isCancelled()) {
      run.stopReading = true;
      summary.cancelled = true;
      logger().warn("cancelled after {} of {} pictures", first, planned.size());
      break;
    }
    if (callbacks.onProgress) callbacks.onProgress({first, planned.size(), planned[first].path});
    PictureGroup group = reading.valid() ? reading.get() : run.read(first, false);
    std::size_t pictureBytes = 0;
    for (const cv::Mat& image : group.images) pictureBytes += image.total() * image.elemSize();
    const std::size_t writing = exportingBytes;
    bool waits = false;
    if (exportingBytes > overlapBytes) {
      collectExports();
      waits = true;
    }
    if (group.end < planned.size()) {
      // The next group's pictures are taken to be as large as these.
      if (exportingBytes + pictureBytes <= overlapBytes)
        reading = readAhead(group.end);
      else
        waits = true;
    }
    if (waits && summary.groupsWaited++ == 0)
      logger().info(
          "{} MB of pictures and results to write and {} MB of pictures to read ahead exceed the {} MB "
          "allowed for overlapping them with the analysis: such groups wait",
          writing >> 20, pictureBytes >> 20, overlapBytes >> 20);
    runModelsOnGroup(run.models, group.images, group.readable, group.frames, group.outcomes,
                     run.options.personBoxes);
    collectExports();
    exportingBytes = pictureBytes;
    for (const FrameResult& frame : group.frames) exportingBytes += frame.bytes();
    exporting = std::async(std::launch::async,
                           [&run, g = std::move(group)]() mutable { return run.exportGroup(std::move(g)); });
  }
  collectExports();
  if (reading.valid()) reading.wait();  // a read ahead of a cancellation
  if (callbacks.onProgress) callbacks.onProgress({planned.size(), planned.size(), ""});
}

nlohmann::json inputEntry(const InputOutcome& o) {
  nlohmann::json entry = {{"input", o.input},
                          {"status", !o.ok                  ? "failed"
                                     : o.taskErrors.empty() ? "ok"
                                                            : "partial"}};
  if (!o.ok) entry["error"] = o.error;
  for (auto& [task, error] : o.taskErrors) entry["task_errors"][std::string(taskName(task))] = error;
  for (auto& [task, warning] : o.warnings) entry["warnings"][std::string(taskName(task))] = warning;
  for (auto& [task, count] : o.nonFiniteValues)
    entry["non_finite_values"][std::string(taskName(task))] = count;
  entry["outputs"] = o.outputs;
  for (auto& [task, ms] : o.inferenceMs) entry["timings_ms"][std::string(taskName(task))] = ms;
  if (!o.personBoxSource.empty()) entry["person_boxes"] = o.personBoxSource;
  return entry;
}

}  // namespace

BatchSummary runBatch(const BatchRunOptions& options, const BatchCallbacks& callbacks) {
  const auto started = std::chrono::steady_clock::now();
  BatchSummary summary;
  if (options.models.tasks.empty())
    throw std::invalid_argument("no task chosen (" + taskNames(headTasks(), ", ") + ")");
  detail::createOutputFolder(options.outputDir);

  LoadedTaskModels loaded = loadTaskModels(options.models);
  summary.demoTasks = loaded.demoTasks;
  summary.taskErrors = loaded.errors;
  for (const LoadedTaskModel& m : loaded.models) summary.tasksRun.push_back(m.task);
  if (loaded.models.empty())
    throw std::runtime_error("no model could be loaded: " + summary.taskErrors.front());

  nlohmann::json manifest =
      detail::manifestOfModels(loaded.models, options.models.dtype, summary.taskErrors, summary.demoTasks);
  manifest["batch_size"] = std::max<std::size_t>(1, options.batchSize);
  summary.manifestPath = (fs::path(options.outputDir) / manifestNameFor(options.shard)).string();
  GroupedRun run{options, loaded.models,
                 shardOf(planInputs(options.inputs, options.outputDir), options.shard, manifest)};
  run.exports = options.exports;
  run.exports.demoTasks = summary.demoTasks;
  run.batchSize = std::max<std::size_t>(1, options.batchSize);
  run.helperNiceness = threads::thisThreadNiceness() + threads::kHelperNicenessStep;
  // OpenCV's OpenEXR switch is an environment variable: set it here, before the helper threads start,
  // since setenv is not safe against other threads' getenv.
  exrWritingSupported();
  analyseGroups(run, callbacks, summary);

  manifest["inputs"] = nlohmann::json::array();
  for (const InputOutcome& o : summary.inputs) manifest["inputs"].push_back(inputEntry(o));
  manifest["succeeded"] = summary.inputs.size() - summary.failedCount();
  manifest["failed"] = summary.failedCount();
  manifest["partial"] = summary.partialCount();
  manifest["cancelled"] = summary.cancelled;
  manifest["overlap"] = {{"budget_bytes", options.overlapBytes}, {"groups_waited", summary.groupsWaited}};
  manifest["elapsed_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  manifest["peak_rss_mb"] = peakResidentMegabytes();
  writeFileAtomically(summary.manifestPath, manifest.dump(2) + "\n");
  return summary;
}

}  // namespace sapiens
