#include "sapiens/model/task.h"

#include <algorithm>
#include <cctype>

namespace sapiens {

std::string_view taskName(Task task) {
  switch (task) {
    case Task::Backbone:
      return "backbone";
    case Task::Pose:
      return "pose";
    case Task::Seg:
      return "seg";
    case Task::Normal:
      return "normal";
    case Task::Albedo:
      return "albedo";
    case Task::Pointmap:
      return "pointmap";
    case Task::Matting:
      return "matting";
  }
  return "unknown";
}

std::string taskNames(const std::vector<Task>& tasks, std::string_view separator) {
  std::string text;
  for (Task task : tasks) {
    if (!text.empty()) text += separator;
    text += taskName(task);
  }
  return text;
}

std::optional<Task> parseTask(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "pretrain") return Task::Backbone;
  if (lower == "segmentation") return Task::Seg;
  for (Task task : allTasks()) {
    if (lower == taskName(task)) return task;
  }
  return std::nullopt;
}

const std::vector<Task>& allTasks() {
  static const std::vector<Task> tasks = {Task::Backbone, Task::Pose,     Task::Seg,    Task::Normal,
                                          Task::Albedo,   Task::Pointmap, Task::Matting};
  return tasks;
}

const std::vector<Task>& headTasks() {
  static const std::vector<Task> tasks(allTasks().begin() + 1, allTasks().end());
  return tasks;
}

const std::vector<Task>& headTasksInRunOrder() {
  static const std::vector<Task> tasks = [] {
    std::vector<Task> ordered = headTasks();
    std::stable_partition(ordered.begin(), ordered.end(), [](Task task) { return task == Task::Seg; });
    return ordered;
  }();
  return tasks;
}

}  // namespace sapiens
