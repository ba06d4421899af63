#include "run_manifest.h"

#include "sapiens/common/version.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/demo_weights.h"
#include "sapiens/model/model.h"

#include <filesystem>

namespace sapiens::detail {

void createOutputFolder(const std::string& folder) {
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec || !std::filesystem::is_directory(folder))
    throw IoError("cannot create the output folder " + folder + ": " + ec.message());
}

nlohmann::json manifestOfModels(const std::vector<LoadedTaskModel>& models, const std::string& requestedDtype,
                                const std::vector<std::string>& taskErrors,
                                const std::vector<Task>& demoTasks) {
  const Model& first = models.front().model.model();
  nlohmann::json manifest;
  manifest["tool"] = "sapiens-cli " + versionString();
  manifest["device"] = first.device().str();
  manifest["dtype"] = computeDtypeName(first.dtype());
  manifest["dtype_requested"] = requestedDtype.empty() ? "auto" : requestedDtype;
  manifest["dtype_reason"] = computeDtypeReason(requestedDtype, first.device());
  manifest["models"] = nlohmann::json::array();
  for (const LoadedTaskModel& m : models)
    manifest["models"].push_back(nlohmann::json::parse(describeTaskModelJson(m)));
  manifest["task_errors"] = taskErrors;
  manifest["demo_weights"] = !demoTasks.empty();
  if (!demoTasks.empty()) manifest["demo_weights_notice"] = demo::kNotice;
  return manifest;
}

}  // namespace sapiens::detail
