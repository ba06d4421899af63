#include "sapiens/model/model_zoo.h"

#include "sapiens/model/architecture_inference.h"
#include "sapiens/model/checkpoint_locator.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

namespace sapiens::zoo {
namespace {

Entry makeEntry(Task task, const std::string& size) {
  Entry e;
  e.task = task;
  e.size = size;
  const std::string folder = taskFolderName(task);
  e.id = folder + "-" + size;
  e.repository = "facebook/sapiens2-" + e.id;
  e.fileName = officialCheckpointFileName(size, task);
  e.relativePath = folder + "/" + e.fileName;
  e.expected = officialArchitecture(size, task);
  e.tensors = static_cast<std::int64_t>(expectedParameters(e.expected).size());
  e.elements = parameterCount(e.expected);
  e.dataBytesIfF32 = 4 * static_cast<std::uint64_t>(e.elements);
  return e;
}

// Layout reports list every tensor; one line is enough here.
std::string shorten(const std::string& text) {
  constexpr std::size_t kLimit = 300;
  return text.size() <= kLimit ? text : text.substr(0, kLimit) + "...";
}

std::string trimSlash(std::string text) {
  while (!text.empty() && text.back() == '/') text.pop_back();
  return text;
}

}  // namespace

Entry customEntry(const std::string& id, const std::string& repository, const Architecture& architecture) {
  Entry e;
  e.task = architecture.task;
  e.size = officialBackboneSize(architecture.backbone).value_or("custom");
  e.id = id;
  e.repository = repository;
  e.fileName = id + ".safetensors";
  e.relativePath = std::string(taskFolderName(e.task)) + "/" + e.fileName;
  e.expected = architecture;
  e.tensors = static_cast<std::int64_t>(expectedParameters(architecture).size());
  e.elements = parameterCount(architecture);
  e.dataBytesIfF32 = 4 * static_cast<std::uint64_t>(e.elements);
  return e;
}

const std::vector<Entry>& catalogue() {
  static const std::vector<Entry> entries = [] {
    std::vector<Entry> list;
    for (const char* size : {"0.1b", "0.4b", "0.8b", "1b", "1b-4k", "5b"})
      list.push_back(makeEntry(Task::Backbone, size));
    for (Task task : {Task::Pose, Task::Seg, Task::Normal, Task::Pointmap})
      for (const char* size : {"0.4b", "0.8b", "1b", "5b"}) list.push_back(makeEntry(task, size));
    list.push_back(makeEntry(Task::Matting, "1b"));  // released later, at 1b only
    return list;
  }();
  return entries;
}

const Entry* find(std::string_view name) {
  std::string text(name);
  const std::string suffix = ".safetensors";
  if (text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0)
    text.resize(text.size() - suffix.size());
  for (const Entry& e : catalogue()) {
    if (text == e.id || text + suffix == e.fileName || text == e.repository) return &e;
  }
  return nullptr;
}

std::vector<const Entry*> starterSet(const std::vector<Task>& tasks, std::string_view size) {
  std::vector<const Entry*> entries;
  for (Task task : tasks) {
    if (task == Task::Backbone) continue;
    const Entry* chosen = nullptr;
    for (const Entry& e : catalogue()) {  // in the order of size, smallest first
      if (e.task != task) continue;
      if (e.size == size) {
        chosen = &e;
        break;
      }
      if (!chosen) chosen = &e;
    }
    if (chosen) entries.push_back(chosen);
  }
  return entries;
}

std::string downloadUrl(const Entry& entry, const std::string& endpoint) {
  std::string base = endpoint;
  if (base.empty()) {
    const char* env = std::getenv("HF_ENDPOINT");
    base = env && *env ? env : "https://huggingface.co";
  }
  return trimSlash(base) + "/" + entry.repository + "/resolve/main/" + entry.fileName;
}

FileCheck checkFile(const Entry& entry, const std::string& path) {
  FileCheck check;
  check.path = path;
  std::error_code ec;
  // Anything standing where the checkpoint goes is checked: SafetensorsFile::open refuses a directory,
  // a FIFO or a device, naming which.
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return check;
  if (std::filesystem::is_regular_file(status)) check.bytes = std::filesystem::file_size(path, ec);
  auto invalid = [&](const std::string& problem) {
    check.state = FileState::Invalid;
    check.problem = problem;
    return check;
  };
  try {
    const SafetensorsFile file = SafetensorsFile::open(path);
    TensorShapes shapes;
    for (const TensorEntry& t : file.tensors()) shapes[t.name] = t.shape;
    const std::string fileName = std::filesystem::path(path).filename().string();
    const Architecture inferred = inferArchitecture(shapes, fileName);
    if (inferred.task != entry.task)
      return invalid(fmt::format("{} holds a {} model, not {} ({})", path, taskName(inferred.task),
                                 taskName(entry.task), entry.id));
    const Architecture expected = entry.architecture();
    if (inferred != expected)
      return invalid(fmt::format("{} is not {}: it holds {} ({}), expected {}", path, entry.fileName,
                                 officialName(inferred).value_or("a custom architecture"),
                                 describeBackbone(inferred.backbone), describeBackbone(expected.backbone)));
    const LayoutProblems problems = checkLayout(shapes, expected);
    if (!problems.empty())
      return invalid(fmt::format("{} is not {}: {}", path, entry.fileName, shorten(problems.summary())));
  } catch (const SafetensorsError& e) {
    return invalid(e.what());
  } catch (const ModelFormatError& e) {
    return invalid(e.what());
  }
  check.state = FileState::Valid;
  return check;
}

FileCheck checkInstalled(const Entry& entry, const std::string& root) {
  return checkFile(entry, root + "/" + entry.relativePath);
}

std::string_view stateName(FileState state) {
  switch (state) {
    case FileState::Missing:
      return "missing";
    case FileState::Valid:
      return "valid";
    case FileState::Invalid:
      return "invalid";
  }
  return "?";
}

}  // namespace sapiens::zoo
