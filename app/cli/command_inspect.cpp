// sapiens-cli inspect: what a Sapiens2 checkpoint is (task, architecture, size, stored dtypes), read
// from the safetensors header alone.

#include "cli_command.h"

#include "sapiens/model/architecture.h"
#include "sapiens/model/architecture_inference.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/parameter_layout.h"
#include "sapiens/model/safetensors.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

namespace sapiens::cli {
namespace {

std::string groupDigits(std::uint64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
    digits.insert(static_cast<std::size_t>(i), ",");
  return digits;
}

std::string humanBytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.2f} {}", value, units[unit]);
}

int inspect(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  const std::string fileName = std::filesystem::path(path).filename().string();
  TensorShapes shapes;
  std::map<std::string, int> dtypeCounts;
  std::uint64_t elements = 0;
  for (const TensorEntry& entry : file.tensors()) {
    shapes[entry.name] = entry.shape;
    ++dtypeCounts[std::string(dtypeName(entry.dtype))];
    elements += static_cast<std::uint64_t>(entry.numel());
  }
  const Architecture arch = inferArchitecture(shapes, fileName);
  const LayoutProblems problems = checkLayout(shapes, arch);
  if (!problems.empty()) {
    throw ModelFormatError(fmt::format("{} does not match the Sapiens2 {} layout: {}", fileName,
                                       taskName(arch.task), problems.summary()));
  }

  std::string archLine;
  if (auto name = officialName(arch)) {
    archLine = *name + " (released configuration)";
  } else if (auto size = officialBackboneSize(arch.backbone)) {
    archLine = fmt::format("custom (sapiens2_{} backbone with a head unlike the released {} head)", *size,
                           taskName(arch.task));
  } else {
    archLine = "custom";
  }
  std::string dtypes;
  for (const auto& [dtype, count] : dtypeCounts) {
    dtypes += fmt::format("{}{} x {}", dtypes.empty() ? "" : ", ", dtype, count);
  }
  const std::string outputs = describeOutputs(arch.task, arch.head);

  std::cout << fmt::format("file           {}\n", path);
  std::cout << fmt::format("file size      {} ({} bytes)\n", humanBytes(file.fileSize()),
                           groupDigits(file.fileSize()));
  std::cout << fmt::format("task           {}{}\n", taskName(arch.task),
                           outputs.empty() ? "" : " (" + outputs + ")");
  std::cout << fmt::format("architecture   {}\n", archLine);
  std::cout << fmt::format("backbone       {}\n", describeBackbone(arch.backbone));
  if (arch.task != Task::Backbone)
    std::cout << fmt::format("head           {}\n", describeHead(arch.task, arch.head));
  std::cout << fmt::format("parameters     {} in {} tensors\n", groupDigits(elements), file.tensors().size());
  std::cout << fmt::format("stored dtypes  {}\n", dtypes);
  for (const auto& [key, value] : file.metadata())
    std::cout << fmt::format("metadata       {} = {}\n", key, value);
  return kOk;
}

}  // namespace

static CliCommand reg("inspect", [](CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto* sub = app.add_subcommand("inspect",
                                 "Show what a Sapiens2 .safetensors checkpoint holds: task, architecture "
                                 "(official size or custom, every dimension), parameter count, dtypes");
  sub->add_option("--model,model", *path, "Checkpoint (.safetensors)")->required();
  return CommandAction([path]() -> int { return inspect(*path); });
});

}  // namespace sapiens::cli
