#pragma once
// What batch and video runs share: their output folder, and the manifest fields that say what ran.

#include "sapiens/pipeline/task_models.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace sapiens::detail {

/// Creates `folder` (and its parents); IoError naming it when it cannot be.
void createOutputFolder(const std::string& folder);

/// "tool", "device", "dtype", "dtype_requested", "dtype_reason", "models", "task_errors",
/// "demo_weights" (and its notice) of a run of `models` (not empty) asked for in `requestedDtype`.
nlohmann::json manifestOfModels(const std::vector<LoadedTaskModel>& models, const std::string& requestedDtype,
                                const std::vector<std::string>& taskErrors,
                                const std::vector<Task>& demoTasks);

}  // namespace sapiens::detail
