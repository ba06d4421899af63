#pragma once
// Fine-tuned models as .safetensors in the official key layout (`backbone.*` + `decode_head.*`, or
// `decode_head.*` alone for a head file), so that Model::load and the official code read them, with the
// fine-tuning record in `__metadata__` (all values strings, JSON where structured):
//   format "sapiens2-finetune", content "full" | "head", task, classes [{"name", "color"}],
//   base_checkpoint, step, settings {...}, metrics {...}.

#include "sapiens/model/model.h"

#include <map>
#include <string>

namespace sapiens {

inline constexpr const char* kFinetuneFormat = "sapiens2-finetune";

/// F32 tensors of the whole model or of its head alone, plus `metadata` (format, content and task are
/// added). Atomic: a killed process leaves the previous file or the new one.
void saveFinetunedModel(const std::string& path, const Model& model, bool fullModel,
                        std::map<std::string, std::string> metadata);

/// The `__metadata__` of a .safetensors file (empty when it has none).
std::map<std::string, std::string> readModelMetadata(const std::string& path);

/// A full file through Model::load; a head file on top of `basePath`, or of the file its metadata names
/// as base_checkpoint when `basePath` is empty. Throws ModelFormatError naming the file.
Model loadFinetunedModel(const std::string& path, const ModelOptions& options = {},
                         const std::string& basePath = {});

}  // namespace sapiens
