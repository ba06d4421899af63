#pragma once
// `sapiens-cli run` as a library call: pictures (files or folders) through the chosen task models, with
// every result exported per picture and a results.json manifest. A bad picture is reported and skipped;
// a model that cannot be loaded fails its task only, and so does a task that fails on a picture (its
// error, or an output that is NaN or infinite everywhere): the picture's other tasks are still written.
// Front ends supply progress and cancellation.

#include "sapiens/model/task.h"
#include "sapiens/pipeline/input_size.h"
#include "sapiens/pipeline/task_analysis.h"
#include "sapiens/pipeline/task_models.h"
#include "sapiens/result/frame_result.h"
#include "sapiens/run/frame_export.h"
#include "sapiens/run/shard.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sapiens {

struct BatchRunOptions {
  std::vector<std::string> inputs;  ///< image files and folders (searched recursively, sorted)
  std::string outputDir;
  TaskModelRequest models;     ///< the tasks (run in dependency order: seg, pose, normal, albedo, pointmap)
                               ///< and their checkpoints, device, dtype and input size
  std::size_t batchSize = 1;   ///< pictures per forward pass (memory grows with it)
  std::optional<Shard> shard;  ///< only this contiguous part of the sorted pictures

  std::vector<BoundingBox> personBoxes;  ///< user boxes for pose, applied to every picture
  FrameExportOptions exports;            ///< each picture's files; the run fills in demoTasks
  /// Memory the overlap may hold besides the group being analysed: the next group's pictures read
  /// ahead and the previous group's pictures and results being written. A group that would exceed it
  /// waits for the writing to finish, or is read only when its turn comes (the manifest counts them).
  std::size_t overlapBytes = std::size_t{1} << 30;
};

struct BatchProgress {
  std::size_t index = 0;  ///< 0-based index of the picture starting now; == total when finished
  std::size_t total = 0;
  std::string input;
};

struct BatchCallbacks {
  std::function<void(const BatchProgress&)> onProgress;
  std::function<bool()> isCancelled;
};

struct InputOutcome {
  std::string input;
  bool ok = false;                         ///< read, analysed by at least one task, and its files written
  std::string error;                       ///< why not, when !ok
  std::map<Task, std::string> taskErrors;  ///< tasks that failed on this picture while others succeeded
  std::map<Task, std::string> warnings;    ///< e.g. NaN or infinite values in a task's output
  std::map<Task, std::int64_t> nonFiniteValues;
  std::map<std::string, std::string> outputs;  ///< kind ("seg", "seg_overlay", "ply", ...) -> file
  std::map<Task, double> inferenceMs;
  std::string personBoxSource;
};

struct BatchSummary {
  std::vector<InputOutcome> inputs;
  std::vector<std::string> taskErrors;  ///< models that could not be loaded, one sentence each
  std::vector<Task> demoTasks;          ///< tasks that ran on untrained demo weights
  std::vector<Task> tasksRun;
  std::string manifestPath;
  bool cancelled = false;
  std::size_t groupsWaited = 0;  ///< groups analysed without the overlap, to stay within overlapBytes

  std::size_t failedCount() const;
  /// Pictures done with one or more of their tasks failed.
  std::size_t partialCount() const;
};

/// Expands folders into their images (recursive, sorted); files are kept as given, missing ones too
/// (they fail when read, with their own message).
std::vector<std::string> expandInputs(const std::vector<std::string>& inputs);

/// Runs everything. Throws only for problems that stop all work (no output folder, no task could load);
/// per-picture and per-task problems are in the summary and the manifest.
BatchSummary runBatch(const BatchRunOptions& options, const BatchCallbacks& callbacks = {});

}  // namespace sapiens
