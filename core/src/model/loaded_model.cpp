#include "sapiens/model/loaded_model.h"

#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"

#include <utility>

namespace sapiens {

LoadedModel LoadedModel::load(const std::string& path, const ModelLoadRequest& request) {
  ModelOptions options;
  options.device = request.device;
  options.dtype = parseComputeDtypeChoice(request.dtype);
  options.expectedTask = request.expectedTask;
  return LoadedModel(Model::load(path, options));
}

LoadedModel::LoadedModel(Model model) : model_(std::make_shared<const Model>(std::move(model))) {}

const Model& LoadedModel::model() const {
  return *model_;
}

Task LoadedModel::task() const {
  return model_->task();
}

const Architecture& LoadedModel::architecture() const {
  return model_->architecture();
}

std::string LoadedModel::deviceName() const {
  return model_->device().str();
}

bool LoadedModel::onGpu() const {
  return model_->device().is_cuda();
}

std::string LoadedModel::dtypeName() const {
  return computeDtypeName(model_->dtype());
}

const std::string& LoadedModel::source() const {
  return model_->source();
}

bool LoadedModel::isDemoWeights() const {
  return model_->isDemoWeights();
}

}  // namespace sapiens
