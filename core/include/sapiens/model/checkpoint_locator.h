#pragma once
// Finding official checkpoints on disk. The official layout under the checkpoint root
// ($SAPIENS_CHECKPOINT_ROOT, default ~/sapiens2_host) is <task folder>/sapiens2_<size>_<task>.safetensors,
// e.g. seg/sapiens2_0.4b_seg.safetensors and pretrain/sapiens2_1b_4k_pretrain.safetensors.

#include "sapiens/model/task.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sapiens {

/// "pretrain" for the backbone, else the task name.
std::string taskFolderName(Task task);
/// "sapiens2_0.4b_seg.safetensors"; the 4K backbone is size "1b-4k" -> "sapiens2_1b_4k_pretrain.safetensors".
std::string officialCheckpointFileName(std::string_view size, Task task);
/// root/<task folder>/<official file name>.
std::string officialCheckpointPath(const std::string& root, std::string_view size, Task task);

struct CheckpointSearch {
  std::optional<std::string> found;
  std::vector<std::string> looked;  ///< every path tried, for the error message
};

/// The official file of `preferredSize`, else any official size present for the task (smallest first),
/// else a `model.safetensors` in the task folder (the Hugging Face copy of the same weights).
CheckpointSearch findCheckpoint(const std::string& root, Task task, std::string_view preferredSize);

}  // namespace sapiens
