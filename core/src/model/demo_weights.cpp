#include "sapiens/model/demo_weights.h"

#include "sapiens/common/build_info.h"
#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/model/model.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace sapiens::demo {
namespace {

namespace fs = std::filesystem;

// One fixed seed per task: the weights depend on nothing else.
std::uint64_t seedFor(Task task) {
  return 0x5A91E2D0ull + static_cast<std::uint64_t>(task);
}

BackboneArch demoBackbone() {
  BackboneArch b;
  b.embedDim = 128;
  b.numLayers = 6;
  b.numHeads = 4;
  b.headDim = 32;
  b.ffnDim = 4 * b.embedDim;
  // The official rule scaled down: plain multi-head attention in the first and last two blocks,
  // half the key/value heads in between.
  b.kvHeads = {4, 4, 2, 2, 4, 4};
  return b;
}

// Small deterministic adjustments after the official random initialisation, so that the untrained
// outputs lie in the value ranges the exports expect (albedo near mid-grey, points in front of the
// camera, a positive pointmap scale). They make nothing "trained".
void adjust(Task task, std::map<std::string, at::Tensor>& p) {
  auto param = [&](const std::string& name) -> at::Tensor& {
    auto it = p.find(name);
    if (it == p.end()) throw std::logic_error("demo weights: no tensor " + name);
    return it->second;
  };
  if (task == Task::Albedo) param("decode_head.conv_albedo.bias").fill_(0.5);
  if (task == Task::Pointmap) {
    param("decode_head.conv_pointmap.bias").copy_(at::tensor({0.0f, 0.0f, 2.0f}));
    param("decode_head.scale_final_layer.5.weight").mul_(0.1);
    param("decode_head.scale_final_layer.5.bias").fill_(1.0);
  }
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

}  // namespace

const std::vector<Task>& demoTasks() {
  return headTasks();
}

Architecture demoArchitecture(Task task) {
  Architecture arch;
  arch.task = task;
  arch.backbone = demoBackbone();
  HeadArch& h = arch.head;
  switch (task) {
    case Task::Backbone:
      throw std::invalid_argument("there are demo weights for the task models only, not the backbone");
    case Task::Pose:
      h.deconvChannels = {64, 32};
      h.deconvKernels = {4, 4};
      h.convChannels = {32, 32, 32};
      h.convKernels = {1, 1, 1};
      h.outChannels = 308;
      break;
    case Task::Seg:
      h.deconvChannels = {64, 32, 16, 16};
      h.deconvKernels = {4, 4, 4, 4};
      h.convChannels = {16, 16};
      h.convKernels = {1, 1};
      h.outChannels = 29;
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
    case Task::Matting:
      h.upsampleChannels = {32, 16, 8, 8};
      h.convChannels = {8, 8, 8};
      h.convKernels = {3, 3, 3};
      h.outChannels = task == Task::Matting ? 4 : 3;
      if (task == Task::Pointmap) {
        // Three stride-2 convolutions take the 64 x 48 grid to 8 x 6: 16 channels x 48 cells = 768.
        h.scaleConvChannels = {64, 32, 16};
        h.scaleConvKernels = {1, 1, 1};
        h.scaleMlp = {768, 64, 32, 1};
      }
      break;
  }
  return arch;
}

std::string demoCheckpointFileName(Task task) {
  return "sapiens2_demo_" + std::string(taskName(task)) + ".safetensors";
}

std::string demoCheckpointPath(const std::string& root, Task task) {
  return root + "/" + std::string(taskName(task)) + "/" + demoCheckpointFileName(task);
}

void writeDemoCheckpoint(Task task, const std::string& path) {
  const Architecture arch = demoArchitecture(task);
  ModelOptions options;
  options.device = "cpu";
  options.dtype = at::kFloat;
  Model model = Model::random(arch, options, seedFor(task));
  adjust(task, model.parameters());

  // The official files store every tensor as F32, the RoPE periods buffer included.
  NamedTensors tensors;
  for (const ParameterSpec& spec : expectedParameters(arch))
    tensors.emplace_back(spec.name, model.parameters().at(spec.name).to(at::kFloat));
  const std::map<std::string, std::string> metadata = {
      {"format", "pt"},         {kMetadataKey, kMetadataValue},
      {kRecipeKey, kRecipe},    {"sapiens_demo_task", std::string(taskName(task))},
      {"description", kNotice},
  };
  std::error_code ec;
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec)
    throw IoError(fmt::format("cannot create the folder {} for {}: {}", folder.string(), path, ec.message()));
  saveSafetensors(path, tensors, metadata);
}

std::vector<std::string> writeDemoCheckpoints(const std::string& root) {
  std::vector<std::string> written;
  for (Task task : demoTasks()) {
    written.push_back(demoCheckpointPath(root, task));
    writeDemoCheckpoint(task, written.back());
  }
  return written;
}

bool isDemoMetadata(const std::map<std::string, std::string>& metadata) {
  auto it = metadata.find(kMetadataKey);
  return it != metadata.end() && it->second == kMetadataValue;
}

bool isCurrentDemoCheckpoint(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  try {
    const SafetensorsFile file = SafetensorsFile::open(path);
    const auto& metadata = file.metadata();
    auto recipe = metadata.find(kRecipeKey);
    return isDemoMetadata(metadata) && recipe != metadata.end() && recipe->second == kRecipe;
  } catch (const SafetensorsError& e) {
    logger().warn("ignoring the demo weights {}: {}", path, e.reason());
    return false;
  }
}

std::vector<std::string> demoWeightsSearchPath() {
  std::vector<std::string> dirs;
  if (auto dir = env("SAPIENS_DEMO_WEIGHTS_DIR"); !dir.empty()) dirs.push_back(dir);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share/sapiens2-studio/demo-weights").string());
  dirs.push_back(std::string(SAPIENS_INSTALL_DATADIR) + "/demo-weights");
  dirs.push_back(SAPIENS_DEMO_WEIGHTS_DIR_BUILD);
  dirs.push_back(paths::userDataDir() + "/demo-weights");
  return dirs;
}

std::string findOrCreateDemoCheckpoint(Task task) {
  return findOrCreateDemoCheckpoint(task, demoWeightsSearchPath());
}

std::string findOrCreateDemoCheckpoint(Task task, const std::vector<std::string>& dirs) {
  if (task == Task::Backbone) demoArchitecture(task);  // throws the explanation
  if (dirs.empty()) throw std::invalid_argument("findOrCreateDemoCheckpoint: empty search path");
  for (const std::string& dir : dirs) {
    const std::string path = demoCheckpointPath(dir, task);
    if (isCurrentDemoCheckpoint(path)) return path;
  }
  const std::string path = demoCheckpointPath(dirs.back(), task);
  logger().info("generating the {} demo weights in {}", taskName(task), path);
  try {
    writeDemoCheckpoint(task, path);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("no {} demo weights in {} and they cannot be generated: {}",
                                         taskName(task), fmt::join(dirs, ", "), e.what()));
  }
  return path;
}

}  // namespace sapiens::demo
