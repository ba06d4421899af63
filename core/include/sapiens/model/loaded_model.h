#pragma once
// A loaded model as front ends hold it: shared and read-only, its device and precision as names, no
// LibTorch type in sight. The tensor-level Model (model.h) stays behind it for the code that runs it;
// front ends pass model() on to core's analysis functions, which need only its declaration.

#include "sapiens/model/architecture.h"
#include "sapiens/model/task.h"

#include <memory>
#include <optional>
#include <string>

namespace sapiens {

class Model;

struct ModelLoadRequest {
  std::string device = "cpu";        ///< "cpu", "cuda", "cuda:N" or "auto"
  std::string dtype;                 ///< "", "auto" (the device's default), "fp32", "bf16", "fp16"
  std::optional<Task> expectedTask;  ///< refuse files of another task
};

class LoadedModel {
 public:
  /// Model::load with the request's names parsed: ModelRunError for an unknown device or precision,
  /// ModelFormatError naming the file for a checkpoint that does not load.
  static LoadedModel load(const std::string& path, const ModelLoadRequest& request);
  explicit LoadedModel(Model model);

  const Model& model() const;
  Task task() const;
  const Architecture& architecture() const;
  /// "cpu", "cuda:0".
  std::string deviceName() const;
  bool onGpu() const;
  /// "fp32", "bf16", "fp16".
  std::string dtypeName() const;
  /// The file it came from ("" for random models).
  const std::string& source() const;
  /// Sapiens2 Studio's untrained demo weights: results must be labelled so.
  bool isDemoWeights() const;

 private:
  std::shared_ptr<const Model> model_;
};

}  // namespace sapiens
