#include "sapiens/model/model.h"

#include "sapiens/common/allocator.h"

#include "backbone_forward.h"
#include "head_forward.h"
#include "parameter_access.h"
#include "sapiens/common/log.h"
#include "sapiens/model/architecture_inference.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/demo_weights.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors_torch.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

namespace sapiens {

void ModelOutputs::add(std::string name, at::Tensor tensor) {
  tensors_.emplace_back(std::move(name), std::move(tensor));
}

bool ModelOutputs::contains(std::string_view name) const {
  for (const auto& entry : tensors_) {
    if (entry.first == name) return true;
  }
  return false;
}

const at::Tensor& ModelOutputs::get(std::string_view name) const {
  for (const auto& entry : tensors_) {
    if (entry.first == name) return entry.second;
  }
  throw std::out_of_range(fmt::format("the model produced no output named '{}'", name));
}

Model::Model(Architecture arch, std::map<std::string, at::Tensor> parameters, c10::Device device,
             c10::ScalarType dtype, std::string source)
    : arch_(std::move(arch)),
      parameters_(std::move(parameters)),
      device_(device),
      dtype_(dtype),
      source_(std::move(source)) {
  if (device_.is_cuda() && dtype_ == at::kFloat) {
    // cuDNN convolutions default to TF32 (a 10-bit mantissa) on Ampere and later GPUs, which moved the
    // heads' float32 outputs ~1e-3 away from the reference (albedo 2.4e-3 of max|ref| on an H200, over
    // the parity bound). Float32 here means float32; bf16 models are unaffected by the switch.
    at::globalContext().setAllowTF32CuDNN(false);
  }
}

namespace {

std::string taskLabel(Task task, const HeadArch& head) {
  if (task == Task::Backbone) return "a backbone-only (pretrain) checkpoint";
  const std::string outputs = describeOutputs(task, head);
  return task == Task::Pose || task == Task::Seg
             ? fmt::format("a {} checkpoint ({})", taskName(task), outputs)
             : fmt::format("a {} checkpoint", taskName(task));
}

// Checks that an architecture can be run at all (the forward pass relies on these).
void validateArchitecture(const Architecture& arch, const std::string& source) {
  const BackboneArch& b = arch.backbone;
  auto fail = [&](const std::string& reason) {
    throw ModelFormatError(fmt::format("{}: unsupported Sapiens2 architecture: {}", source, reason));
  };
  if (b.embedDim <= 0 || b.numLayers <= 0 || b.numHeads <= 0 || b.headDim <= 0 || b.ffnDim <= 0) {
    fail("every dimension must be positive (" + describeBackbone(b) + ")");
  }
  if (b.headDim % 4 != 0)
    fail(fmt::format("head size {} is not a multiple of 4 (2-D RoPE needs it)", b.headDim));
  if (b.numHeads * b.headDim != b.embedDim) {
    fail(fmt::format("{} heads x {} != embedding width {}", b.numHeads, b.headDim, b.embedDim));
  }
  if (static_cast<int>(b.kvHeads.size()) != b.numLayers) {
    fail(fmt::format("{} kv-head counts for {} blocks", b.kvHeads.size(), b.numLayers));
  }
  for (int kv : b.kvHeads) {
    if (kv <= 0 || b.numHeads % kv != 0)
      fail(fmt::format("{} kv heads do not divide {} heads", kv, b.numHeads));
  }
  if (b.tokenizer.layers > 0 && b.tokenizer.windowSize <= 0) fail("tokenizer window size must be positive");
}

}  // namespace

Model Model::load(const std::string& path, const ModelOptions& options) {
  memory::keepLargeBlocksInHeap();
  const std::string fileName = std::filesystem::path(path).filename().string();
  SafetensorsFile file = SafetensorsFile::open(path);
  TensorShapes shapes;
  for (const TensorEntry& entry : file.tensors()) shapes[entry.name] = entry.shape;

  const Architecture inferred = inferArchitecture(shapes, fileName);
  const std::optional<Task> wanted =
      options.expectedTask
          ? options.expectedTask
          : (options.expectedArch ? std::optional<Task>(options.expectedArch->task) : std::nullopt);
  if (wanted && *wanted != inferred.task) {
    throw ModelFormatError(fmt::format("{} is {}, not {}", fileName, taskLabel(inferred.task, inferred.head),
                                       taskName(*wanted)));
  }
  const Architecture arch = options.expectedArch ? *options.expectedArch : inferred;
  validateArchitecture(arch, fileName);
  const LayoutProblems problems = checkLayout(shapes, arch);
  if (!problems.empty()) {
    throw ModelFormatError(fmt::format("{} does not match the Sapiens2 {} layout ({}): {}", fileName,
                                       taskName(arch.task), officialName(arch).value_or("custom size"),
                                       problems.summary()));
  }

  const c10::Device device = resolveDevice(options.device);
  const c10::ScalarType dtype = options.dtype ? *options.dtype : defaultComputeDtype(device);
  checkComputeSupported(device, dtype);
  const std::string periodsName = ropePeriodsName(arch.task);
  std::map<std::string, at::Tensor> parameters;
  for (const ParameterSpec& spec : expectedParameters(arch)) {
    const TensorEntry& entry = *file.find(spec.name);
    const c10::ScalarType target = spec.name == periodsName ? at::kBFloat16 : dtype;
    // Copied (and converted) from the mapping piece by piece, each piece's pages dropped from the resident
    // set once copied: otherwise the file's pages read so far stay resident beside the copies (a bf16 load
    // of an F32 file peaked at 3x the bf16 weights). Nothing may alias the mapping past `file` anyway.
    at::Tensor tensor;
    if (device.is_cpu()) {
      tensor = copyTensorReleasingPages(file, entry, target);
    } else {
      tensor = loadTensor(file, entry, target).to(device);
      file.releasePages(entry);
    }
    requireFiniteTensor(tensor, fileName, spec.name);
    parameters.emplace(spec.name, std::move(tensor));
  }
  logger().debug("Loaded {}: {} model, {} ({} parameters) on {} in {}", path, taskName(arch.task),
                 officialName(arch).value_or("custom size"), parameterCount(arch), device.str(),
                 computeDtypeName(dtype));
  Model model(arch, std::move(parameters), device, dtype, path);
  model.metadata_ = file.metadata();
  if (model.isDemoWeights()) logger().debug("{}: {}", fileName, demo::kNotice);
  return model;
}

bool Model::isDemoWeights() const {
  return demo::isDemoMetadata(metadata_);
}

namespace {

void checkInput(const at::Tensor& input, const BackboneArch& b) {
  const int multiple = b.inputMultiple();
  if (input.dim() != 4 || input.size(1) != 3 || input.size(2) < multiple || input.size(3) < multiple ||
      input.size(2) % multiple != 0 || input.size(3) % multiple != 0) {
    throw ModelRunError(
        fmt::format("model input must be (B, 3, H, W) with H and W positive multiples of {}, got {}",
                    multiple, fmt::join(input.sizes(), "x")));
  }
  if (!at::isFloatingType(input.scalar_type())) {
    throw ModelRunError(fmt::format("model input must be a floating-point tensor, got {}",
                                    c10::toString(input.scalar_type())));
  }
}

bool isHeadKey(const std::string& name) {
  return name.rfind(kHeadPrefix, 0) == 0;
}

// Errors from inside a pass become one line that says what went wrong, instead of LibTorch's report with
// its backtrace; running out of memory also says what to change. The failed pass's tensors are freed as
// the stack unwinds, so the model stays usable at a smaller batch or resolution.
template <typename Fn>
auto reportingRunErrors(const char* pass, const at::Tensor& input, c10::Device device, c10::ScalarType dtype,
                        Fn&& fn) {
  const auto outOfMemory = [&](bool onDevice, std::string detail) {
    detail.resize(std::min(detail.find('\n'), detail.size()));
    if (const auto cut = detail.find(" Of the allocated"); cut != std::string::npos) detail.resize(cut);
    return ModelOutOfMemoryError(
        fmt::format(
            "out of {} memory in the {} of a batch of {} at {}x{} ({} on {}): lower the batch size or "
            "the input resolution{} [{}]",
            onDevice ? "GPU" : "host", pass, input.size(0), input.size(2), input.size(3),
            computeDtypeName(dtype), device.str(), onDevice ? ", or run on the CPU" : "", detail),
        onDevice);
  };
  try {
    return fn();
  } catch (const c10::OutOfMemoryError& e) {
    throw outOfMemory(device.is_cuda(), e.msg());
  } catch (const c10::Error& e) {
    const std::string message = e.what_without_backtrace();
    if (message.find("can't allocate memory") != std::string::npos) {
      throw outOfMemory(false, message.substr(std::min(message.find("DefaultCPUAllocator"), message.size())));
    }
    throw ModelRunError(fmt::format("the {} failed on {}: {}", pass, device.str(), message));
  } catch (const std::bad_alloc&) {
    throw outOfMemory(false, "allocation failed");
  }
}

}  // namespace

ModelOutputs Model::forward(const at::Tensor& input, const ForwardOptions& options) const {
  checkInput(input, arch_.backbone);
  return reportingRunErrors("forward pass", input, device_, dtype_,
                            [&] { return forwardChecked(input, options); });
}

ModelOutputs Model::forwardChecked(const at::Tensor& input, const ForwardOptions& options) const {
  const BackboneArch& b = arch_.backbone;
  std::optional<c10::InferenceMode> inferenceGuard;
  if (options.inferenceMode) inferenceGuard.emplace();

  const at::Tensor x = input.to(device_, dtype_);
  ModelOutputs intermediates;
  const detail::ParameterAccess backboneParams(parameters_, backbonePrefix(arch_.task));
  const detail::BackboneResult features = detail::runBackbone(
      backboneParams, b, x, options.ropePrecision, options.intermediates ? &intermediates : nullptr);

  ModelOutputs outputs;
  if (arch_.task == Task::Backbone) {
    outputs.add("backbone_out", features.tokens);
    outputs.add("backbone_featmap", features.featmap);
  } else {
    outputs.add("backbone_out", features.featmap);
    detail::runHead(detail::ParameterAccess(parameters_, kHeadPrefix), arch_.task, arch_.head,
                    features.featmap, outputs);
  }
  for (const auto& [name, tensor] : intermediates.all()) outputs.add(name, tensor);
  return outputs;
}

at::Tensor Model::backboneFeatures(const at::Tensor& input, RopePrecision ropePrecision) const {
  checkInput(input, arch_.backbone);
  return reportingRunErrors("backbone pass", input, device_, dtype_, [&] {
    at::Tensor featmap;
    {
      c10::InferenceMode guard;
      const detail::ParameterAccess backboneParams(parameters_, backbonePrefix(arch_.task));
      featmap = detail::runBackbone(backboneParams, arch_.backbone, input.to(device_, dtype_), ropePrecision,
                                    nullptr)
                    .featmap;
    }
    // Outside inference mode the copy is an ordinary tensor that autograd may save for the backward pass.
    return featmap.clone();
  });
}

ModelOutputs Model::forwardHead(const at::Tensor& featmap, const ForwardOptions& options) const {
  if (arch_.task == Task::Backbone)
    throw ModelRunError("a backbone-only (pretrain) model has no head to run");
  if (featmap.dim() != 4 || featmap.size(1) != arch_.backbone.embedDim) {
    throw ModelRunError(fmt::format("the head needs backbone features (B, {}, h, w), got {}",
                                    arch_.backbone.embedDim, fmt::join(featmap.sizes(), "x")));
  }
  std::optional<c10::InferenceMode> inferenceGuard;
  if (options.inferenceMode) inferenceGuard.emplace();
  ModelOutputs outputs;
  detail::runHead(detail::ParameterAccess(parameters_, kHeadPrefix), arch_.task, arch_.head,
                  featmap.to(device_, dtype_), outputs);
  return outputs;
}

std::vector<std::pair<std::string, at::Tensor>> Model::headParameters() const {
  std::vector<std::pair<std::string, at::Tensor>> head;
  for (const ParameterSpec& spec : expectedParameters(arch_)) {
    if (isHeadKey(spec.name)) head.emplace_back(spec.name, parameters_.at(spec.name));
  }
  return head;
}

void Model::setHead(const HeadArch& head, const std::map<std::string, at::Tensor>& tensors,
                    const std::string& source) {
  if (arch_.task == Task::Backbone)
    throw ModelFormatError(
        fmt::format("{}: a backbone-only (pretrain) model has no head to replace", source));
  Architecture arch = arch_;
  arch.head = head;
  TensorShapes shapes;
  for (const auto& [name, tensor] : parameters_) {
    if (!isHeadKey(name)) shapes[name] = tensor.sizes().vec();
  }
  for (const auto& [name, tensor] : tensors) shapes[name] = tensor.sizes().vec();
  const LayoutProblems problems = checkLayout(shapes, arch);
  if (!problems.empty()) {
    throw ModelFormatError(fmt::format("{} does not fit the {} head ({}): {}", source, taskName(arch.task),
                                       describeHead(arch.task, head), problems.summary()));
  }
  for (auto it = parameters_.begin(); it != parameters_.end();) {
    it = isHeadKey(it->first) ? parameters_.erase(it) : std::next(it);
  }
  for (const auto& [name, tensor] : tensors) {
    parameters_.emplace(name, tensor.detach().to(device_, dtype_, /*non_blocking=*/false, /*copy=*/true));
  }
  arch_ = std::move(arch);
}

}  // namespace sapiens
