// Model::random: fresh weights with the official initialisation (doc 1.9 and the head init of section 5).

#include "sapiens/common/allocator.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

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

// `t`: float32, of spec's shape, filled here.
at::Tensor initialiseInto(at::Tensor t, const ParameterSpec& spec, at::Generator& generator) {
  const std::string& name = spec.name;
  if (endsWith(name, "rope_embed.periods")) return ropePeriods(spec.shape[0] * 4);
  if (isNormWeight(name)) return t.fill_(1.0);
  if (endsWith(name, "attn.gamma.weight")) return t.fill_(1e-4);
  if (endsWith(name, ".bias")) return t.zero_();
  const bool head = name.rfind(kHeadPrefix, 0) == 0;
  if (!head) return t.normal_(0.0, 0.02, generator).clamp_(-2.0, 2.0);  // trunc-normal std 0.02, cut at +-2
  int64_t receptive = 1;
  for (std::size_t i = 2; i < spec.shape.size(); ++i) receptive *= spec.shape[i];
  if (spec.shape.size() == 2)
    return t.normal_(0.0, 1.0 / std::sqrt(static_cast<double>(spec.shape[1])), generator);
  // Kaiming normal, fan_out, ReLU gain.
  return t.normal_(0.0, std::sqrt(2.0 / static_cast<double>(spec.shape[0] * receptive)), generator);
}

at::Tensor initialise(const ParameterSpec& spec, at::Generator& generator) {
  return initialiseInto(at::empty(spec.shape, at::TensorOptions().dtype(at::kFloat)), spec, generator);
}

// The official initialisation draws in float32. For another dtype or device every tensor is drawn into
// one reused float32 buffer and only its conversion is kept: a float32 temporary per tensor, freed
// after its smaller conversion was allocated, left holes that the heap (never trimmed, allocator.h)
// kept, e.g. 250 MB above the 0.4b's 790 MB of bf16 weights.
class FloatStaging {
 public:
  explicit FloatStaging(const std::vector<ParameterSpec>& specs) {
    int64_t largest = 0;
    for (const ParameterSpec& spec : specs) largest = std::max(largest, spec.numel());
    buffer_ = at::empty({largest}, at::TensorOptions().dtype(at::kFloat));
  }
  at::Tensor draw(const ParameterSpec& spec, at::Generator& generator, c10::Device device,
                  c10::ScalarType dtype) {
    at::Tensor t = initialiseInto(buffer_.narrow(0, 0, spec.numel()).view(spec.shape), spec, generator);
    return t.to(device, dtype, /*non_blocking=*/false, /*copy=*/true);
  }

 private:
  at::Tensor buffer_;
};

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
  const std::vector<ParameterSpec> specs = expectedParameters(arch);
  const bool inPlace = device.is_cpu() && dtype == at::kFloat;
  std::optional<FloatStaging> staging;
  if (!inPlace) staging.emplace(specs);
  for (const ParameterSpec& spec : specs) {
    const c10::ScalarType target = endsWith(spec.name, "rope_embed.periods") ? at::kBFloat16 : dtype;
    parameters.emplace(spec.name, inPlace ? initialise(spec, generator).to(target)
                                          : staging->draw(spec, generator, device, target));
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
