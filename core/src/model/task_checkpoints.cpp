#include "sapiens/model/task_checkpoints.h"

#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/model/checkpoint_locator.h"
#include "sapiens/model/demo_weights.h"

#include <algorithm>
#include <string>
#include <vector>

namespace sapiens {
namespace {

TaskCheckpoint resolveOne(Task task, const CheckpointRequest& request, const std::string& root) {
  TaskCheckpoint entry;
  entry.task = task;
  if (auto it = request.explicitPaths.find(task); it != request.explicitPaths.end()) {
    entry.source = CheckpointSource::Explicit;
    entry.path = it->second;
    return entry;
  }
  const CheckpointSearch search = findCheckpoint(root, task, request.size);
  if (search.found) {
    entry.source = CheckpointSource::Found;
    entry.path = *search.found;
    logger().debug("found the {} checkpoint {}", taskName(task), entry.path);  // loading it says so at info
    return entry;
  }
  const std::string notFound = "no " + std::string(taskName(task)) + " checkpoint found under " + root +
                               " (looked for " + search.looked.front() + " and other official sizes)";
  if (!request.demoFallback) {
    entry.error = notFound;
    return entry;
  }
  try {
    entry.path = demo::findOrCreateDemoCheckpoint(task);
    entry.source = CheckpointSource::DemoWeights;
    // Where it looked, per task; resolveTaskCheckpoints warns once for all of them.
    logger().info("{}; using the demo weights {}", notFound, entry.path);
  } catch (const std::exception& e) {
    entry.error = notFound + "; " + e.what();
  }
  return entry;
}

}  // namespace

std::vector<TaskCheckpoint> resolveTaskCheckpoints(const CheckpointRequest& request) {
  const std::string root = request.root.empty() ? paths::checkpointRoot() : request.root;
  std::vector<TaskCheckpoint> out;
  std::vector<Task> demoTasks;
  for (Task task : headTasksInRunOrder()) {
    if (std::find(request.tasks.begin(), request.tasks.end(), task) == request.tasks.end()) continue;
    out.push_back(resolveOne(task, request, root));
    if (out.back().source == CheckpointSource::DemoWeights) demoTasks.push_back(task);
  }
  if (!demoTasks.empty())
    logger().warn(
        "{} run on UNTRAINED demo weights (no checkpoint under {}): their results are not "
        "predictions",
        taskNames(demoTasks, ", "), root);
  return out;
}

}  // namespace sapiens
