#include "sapiens/model/checkpoint_locator.h"

#include "sapiens/model/architecture.h"

#include <filesystem>

namespace sapiens {

std::string taskFolderName(Task task) {
  return task == Task::Backbone ? "pretrain" : std::string(taskName(task));
}

std::string officialCheckpointFileName(std::string_view size, Task task) {
  std::string s(size);
  for (char& c : s)
    if (c == '-') c = '_';
  return "sapiens2_" + s + "_" + taskFolderName(task) + ".safetensors";
}

std::string officialCheckpointPath(const std::string& root, std::string_view size, Task task) {
  return root + "/" + taskFolderName(task) + "/" + officialCheckpointFileName(size, task);
}

CheckpointSearch findCheckpoint(const std::string& root, Task task, std::string_view preferredSize) {
  CheckpointSearch search;
  std::error_code ec;
  auto tryPath = [&](const std::string& path) {
    search.looked.push_back(path);
    if (std::filesystem::is_regular_file(path, ec)) search.found = path;
    return search.found.has_value();
  };
  if (!preferredSize.empty() && tryPath(officialCheckpointPath(root, preferredSize, task))) return search;
  for (const std::string& size : officialSizes()) {
    if (size == preferredSize) continue;
    if (tryPath(officialCheckpointPath(root, size, task))) return search;
  }
  tryPath(root + "/" + taskFolderName(task) + "/model.safetensors");
  return search;
}

}  // namespace sapiens
