// Model::random: fresh weights with the official initialisation (doc 1.9 and the head init of section 5).

#include "sapiens/common/allocator.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <cmath>

namespace sapiens {

namespace {

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isNormWeight(const std::string& name) {
  return endsWith(name, "ln1.weight") || endsWith(name, "ln2.weight") || endsWith(name, "q_norm.weight") ||
         endsWith(name, "k_norm.weight") || endsWith(name, ".norm.weight");
}

// periods[j] = base^(2j / (d/2)), evaluated on bf16 tensors as the official buffer init does.
at::Tensor ropePeriods(int64_t headDim) {
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  const at::Tensor exponents = at::arange(headDim / 4, bf16).mul(2).div(headDim / 2);
  return at::pow(100.0, exponents);
}

at::Tensor initialise(const ParameterSpec& spec, at::Generator& generator) {
  const std::string& name = spec.name;
  const auto fp32 = at::TensorOptions().dtype(at::kFloat);
  if (endsWith(name, "rope_embed.periods")) return ropePeriods(spec.shape[0] * 4);
  if (isNormWeight(name)) return at::ones(spec.shape, fp32);
  if (endsWith(name, "attn.gamma.weight")) return at::full(spec.shape, 1e-4, fp32);
  if (endsWith(name, ".bias")) return at::zeros(spec.shape, fp32);
  at::Tensor t = at::empty(spec.shape, fp32);
  const bool head = name.rfind(kHeadPrefix, 0) == 0;
  if (!head) return t.normal_(0.0, 0.02, generator).clamp_(-2.0, 2.0);  // trunc-normal std 0.02, cut at +-2
  int64_t receptive = 1;
  for (std::size_t i = 2; i < spec.shape.size(); ++i) receptive *= spec.shape[i];
  if (spec.shape.size() == 2)
    return t.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(spec.shape[1])), generator);
  // Kaiming normal, fan_out, ReLU gain.
  return t.normal_(0.0, std::sqrt(2.0 / static_cast<double>(spec.shape[0] * receptive)), generator);
}

}  // namespace

Model Model::random(const Architecture& arch, const ModelOptions& options, std::uint64_t seed) {
  memory::keepLargeBlocksInHeap();
  const c10::Device device = resolveDevice(options.device);
  const c10::ScalarType dtype = options.dtype ? *options.dtype : defaultComputeDtype(device);
  checkComputeSupported(device, dtype);
  if (arch.backbone.headDim % 4 != 0 ||
      static_cast<int>(arch.backbone.kvHeads.size()) != arch.backbone.numLayers) {
    throw ModelFormatError(fmt::format("cannot build a random model: inconsistent architecture ({})",
                                       describeBackbone(arch.backbone)));
  }
  at::Generator generator = at::detail::createCPUGenerator(seed);
  std::map<std::string, at::Tensor> parameters;
  for (const ParameterSpec& spec : expectedParameters(arch)) {
    at::Tensor t = initialise(spec, generator);
    const c10::ScalarType target = endsWith(spec.name, "rope_embed.periods") ? at::kBFloat16 : dtype;
    parameters.emplace(spec.name, t.to(device, target));
  }
  return Model(arch, std::move(parameters), device, dtype, "");
}

void Model::resetHead(const HeadArch& head, std::uint64_t seed) {
  Architecture arch = arch_;
  arch.head = head;
  at::Generator generator = at::detail::createCPUGenerator(seed);
  std::map<std::string, at::Tensor> tensors;
  for (const ParameterSpec& spec : expectedParameters(arch)) {
    if (spec.name.rfind(kHeadPrefix, 0) == 0) tensors.emplace(spec.name, initialise(spec, generator));
  }
  setHead(head, tensors, "a fresh head");
}

}  // namespace sapiens
