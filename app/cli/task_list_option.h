#pragma once
// The --task value shared by the commands that run several task models: a comma-separated list.

#include "sapiens/model/task.h"

#include <CLI/CLI.hpp>

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
                                 "unknown task '" + name + "' (pose, seg, normal, albedo, pointmap)");
    tasks.push_back(*task);
  }
  return tasks;
}

}  // namespace sapiens::cli
