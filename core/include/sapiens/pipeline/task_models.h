#pragma once
// The task models of a run, loaded once: explicit checkpoints, else the official layout under a model
// folder. A model that cannot be found or loaded fails its task only, with a sentence saying why.

#include "sapiens/model/architecture.h"
#include "sapiens/model/loaded_model.h"
#include "sapiens/model/task.h"
#include "sapiens/pipeline/input_size.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sapiens {

struct TaskModelRequest {
  std::vector<Task> tasks;
  std::map<Task, std::string> modelPaths;  ///< explicit checkpoints; others are looked up in modelDir
  std::string modelDir;                    ///< default: paths::checkpointRoot()
  std::string size = "0.4b";               ///< preferred official size when looking up
  std::string device = "auto";
  std::string dtype;                   ///< "" or "auto": the device's default (defaultComputeDtype)
  std::optional<InputSize> inputSize;  ///< default: defaultInputSize(model)
  /// A task with no explicit checkpoint and none found under modelDir runs on the untrained demo
  /// weights (demo::findOrCreateDemoCheckpoint) instead of failing, with a warning. Front ends set it
  /// when the user named no model folder; results must then be labelled (LoadedTaskModels::demoTasks).
  bool demoFallback = false;
};

struct LoadedTaskModel {
  Task task;
  std::string path;
  LoadedModel model;
  InputSize inputSize;
};

struct LoadedTaskModels {
  std::vector<LoadedTaskModel> models;  ///< in dependency order: seg, pose, normal, albedo, pointmap
  std::vector<std::string> errors;      ///< one sentence per task that could not load
  std::vector<Task> demoTasks;          ///< tasks running on untrained demo weights (fallback or explicit)
};

LoadedTaskModels loadTaskModels(const TaskModelRequest& request);

/// The default network input for a model: 768 x 1024, unless the pointmap scale branch fixes another
/// token grid (its first linear layer's width), then the 3:4 size that gives that grid.
InputSize defaultInputSize(const Architecture& arch);
/// Whether a model runs at one input size only (defaultInputSize gives it): a pointmap head whose scale
/// branch flattens a fixed token grid into its first linear layer.
bool hasFixedInputSize(const Architecture& arch);

/// {"task", "path", "architecture", "backbone", "head", "input_size", "demo_weights"} for manifests, as
/// JSON text ("demo_weights": true for Sapiens2 Studio's untrained demo weights).
std::string describeTaskModelJson(const LoadedTaskModel& model);

}  // namespace sapiens
