#include "sapiens/pipeline/task_models.h"

#include "sapiens/common/log.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/task_checkpoints.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace sapiens {
LoadedTaskModels loadTaskModels(const TaskModelRequest& request) {
  LoadedTaskModels out;
  CheckpointRequest checkpoints;
  checkpoints.tasks = request.tasks;
  checkpoints.explicitPaths = request.modelPaths;
  checkpoints.root = request.modelDir;
  checkpoints.size = request.size;
  checkpoints.demoFallback = request.demoFallback;
  ModelLoadRequest loadRequest;
  loadRequest.device = request.device;
  loadRequest.dtype = request.dtype;

  for (const TaskCheckpoint& checkpoint : resolveTaskCheckpoints(checkpoints)) {
    const Task task = checkpoint.task;
    if (checkpoint.source == CheckpointSource::None) {
      out.errors.push_back(checkpoint.error);
      logger().error("{}", out.errors.back());
      continue;
    }
    try {
      ModelLoadRequest r = loadRequest;
      r.expectedTask = task;
      LoadedModel model = LoadedModel::load(checkpoint.path, r);
      InputSize size = request.inputSize ? *request.inputSize : defaultInputSize(model.architecture());
      logger().info("{} model: {} ({}, {} on {}){}", taskName(task), checkpoint.path,
                    officialName(model.architecture()).value_or("custom architecture"), model.dtypeName(),
                    model.deviceName(), model.isDemoWeights() ? " - UNTRAINED demo weights" : "");
      if (model.isDemoWeights()) out.demoTasks.push_back(task);
      out.models.push_back(LoadedTaskModel{task, checkpoint.path, std::move(model), size});
    } catch (const std::exception& e) {
      out.errors.push_back(std::string(taskName(task)) + ": " + e.what());
      logger().error("{}", out.errors.back());
    }
  }
  return out;
}

std::string describeTaskModelJson(const LoadedTaskModel& m) {
  const Architecture& arch = m.model.architecture();
  auto official = officialName(arch);
  const nlohmann::json j = {{"task", std::string(taskName(m.task))},
                            {"path", m.path},
                            {"architecture", official ? *official : "custom"},
                            {"backbone", describeBackbone(arch.backbone)},
                            {"head", describeHead(arch.task, arch.head)},
                            {"input_size", {m.inputSize.height, m.inputSize.width}},
                            {"demo_weights", m.model.isDemoWeights()}};
  return j.dump();
}

bool hasFixedInputSize(const Architecture& arch) {
  return arch.task == Task::Pointmap && !arch.head.scaleMlp.empty() && !arch.head.scaleConvChannels.empty();
}

InputSize defaultInputSize(const Architecture& arch) {
  const InputSize official{768, 1024};
  if (!hasFixedInputSize(arch)) return official;
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

}  // namespace sapiens
