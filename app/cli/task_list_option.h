#pragma once
// The options shared by the commands that run several task models: --task (a comma-separated list) and
// --TASK-model (a checkpoint per task).

#include "sapiens/model/task.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace sapiens::cli {

/// "pose,seg" -> {Pose, Seg}. Throws CLI::ValidationError (exit code 2) on an unknown name.
inline std::vector<Task> parseTaskList(const std::string& text) {
  std::vector<Task> tasks;
  std::stringstream in(text);
  for (std::string name; std::getline(in, name, ',');) {
    auto task = parseTask(name);
    if (!task || *task == Task::Backbone)
      throw CLI::ValidationError("--task",
                                 "unknown task '" + name + "' (" + taskNames(headTasks(), ", ") + ")");
    tasks.push_back(*task);
  }
  return tasks;
}

/// --pose-model, --seg-model, ... FILE: a checkpoint per task into `args->modelPaths` (`args`, the
/// command's shared arguments, is kept alive by the callbacks).
template <class Args>
void addTaskModelOptions(CLI::App* sub, const std::shared_ptr<Args>& args) {
  for (Task t : headTasks()) {
    const std::string name(taskName(t));
    sub->add_option_function<std::string>(
        "--" + name + "-model", [args, t](const std::string& path) { args->modelPaths[t] = path; },
        "Checkpoint for " + name + " (overrides --model-dir)");
  }
}

}  // namespace sapiens::cli
