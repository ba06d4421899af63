#include "sapiens/finetune/finetuned_model_file.h"

#include "sapiens/model/architecture_inference.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <filesystem>

namespace sapiens {

namespace fs = std::filesystem;

void saveFinetunedModel(const std::string& path, const Model& model, bool fullModel,
                        std::map<std::string, std::string> metadata) {
  NamedTensors tensors;
  for (const ParameterSpec& spec : expectedParameters(model.architecture())) {
    if (!fullModel && spec.name.rfind(kHeadPrefix, 0) != 0) continue;
    const at::Tensor& tensor = model.parameters().at(spec.name);
    // The RoPE periods stay bf16, as the official files and Model::load have them.
    const at::ScalarType dtype = tensor.scalar_type() == at::kBFloat16 ? at::kBFloat16 : at::kFloat;
    tensors.emplace_back(spec.name, tensor.detach().to(at::kCPU, dtype).contiguous());
  }
  metadata["format"] = kFinetuneFormat;
  metadata["content"] = fullModel ? "full" : "head";
  metadata["task"] = std::string(taskName(model.task()));
  saveSafetensors(path, tensors, metadata);
}

std::map<std::string, std::string> readModelMetadata(const std::string& path) {
  return SafetensorsFile::open(path).metadata();
}

Model loadFinetunedModel(const std::string& path, const ModelOptions& options, const std::string& basePath) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  const auto content = file.metadata().find("content");
  if (content == file.metadata().end() || content->second != "head") return Model::load(path, options);

  std::string base = basePath;
  if (base.empty()) {
    const auto named = file.metadata().find("base_checkpoint");
    if (named == file.metadata().end() || named->second.empty())
      throw ModelFormatError(fmt::format("{} holds a head alone and names no base checkpoint", path));
    base = named->second;
    if (fs::path(base).is_relative() && !fs::exists(base))
      base = (fs::path(path).parent_path() / base).string();
  }
  Model model = Model::load(base, options);
  TensorShapes shapes;
  for (const auto& [name, tensor] : model.parameters()) {
    if (name.rfind(kHeadPrefix, 0) != 0) shapes[name] = tensor.sizes().vec();
  }
  std::map<std::string, at::Tensor> head;
  for (const TensorEntry& entry : file.tensors()) {
    if (entry.name.rfind(kHeadPrefix, 0) != 0)
      throw ModelFormatError(
          fmt::format("{}: a head file holds only decode_head.* tensors, not {}", path, entry.name));
    shapes[entry.name] = entry.shape;
    at::Tensor tensor = loadTensor(file, entry, at::kFloat);
    requireFiniteTensor(tensor, fs::path(path).filename().string(), entry.name);
    head.emplace(entry.name, std::move(tensor));
  }
  const Architecture arch = inferArchitecture(shapes, path);
  if (arch.task != model.task()) {
    throw ModelFormatError(fmt::format("{} is a {} head, its base {} a {} model", path, taskName(arch.task),
                                       base, taskName(model.task())));
  }
  model.setHead(arch.head, head, path);
  return model;
}

}  // namespace sapiens
