// sapiens-cli forward: one raw forward pass on a tensor, for checking numerics against a reference.
// Reads the tensor named `input` (B x 3 x H x W, normalised RGB) and writes every named output as F32.
// With --expect, compares the outputs with the same-named tensors of a reference file (the golden
// fixtures' io.safetensors) at the fixtures' tolerances, e.g. to check a CUDA build (tools/gpu-check.sh).

#include "cli_command.h"

#include "sapiens/common/log.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/safetensors_torch.h"
#include "sapiens/model/tensor_difference.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>
#include <memory>

namespace sapiens::cli {
namespace {

struct ForwardCommandOptions {
  std::string model;
  std::string input;
  std::string output;
  std::string device = "cpu";
  std::string dtype;
  bool intermediates = false;
  std::string expect;
  double toleranceScale = 1.0;
};

at::Tensor readInput(const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  const TensorEntry* entry = file.find("input");
  if (entry == nullptr) {
    std::vector<std::string> names;
    for (const TensorEntry& e : file.tensors()) names.push_back(e.name);
    throw ModelRunError(fmt::format("{} has no tensor named 'input' (it holds: {})", path,
                                    names.empty() ? "nothing" : fmt::format("{}", fmt::join(names, ", "))));
  }
  return loadTensor(file, *entry, at::kFloat).clone();
}

// Every output with a same-named reference tensor and a fixture tolerance; exit code 1 when one is off.
int compareWithReference(const NamedTensors& outputs, const std::string& referencePath, double scale) {
  const SafetensorsFile reference = SafetensorsFile::open(referencePath);
  int compared = 0;
  int failed = 0;
  std::cout << fmt::format("compared with {} (tolerances x{}):\n", referencePath, scale);
  for (const auto& [name, tensor] : outputs) {
    const TensorEntry* entry = reference.find(name);
    const auto tolerance = parityTolerance(name);
    if (entry == nullptr || !tolerance) continue;
    const TensorDifference d = tensorDifference(tensor, loadTensor(reference, *entry, at::kFloat));
    const ParityTolerance scaled{tolerance->maxRelative * scale, tolerance->meanRelative * scale};
    const bool ok = d.shapesMatch && withinTolerance(d, scaled);
    ++compared;
    failed += ok ? 0 : 1;
    std::cout << fmt::format("  {:<18} max {:.3g} mean {:.3g} (bounds {:.3g} {:.3g}) {}\n", name,
                             d.maxRelative, d.meanRelative, scaled.maxRelative, scaled.meanRelative,
                             !d.shapesMatch ? "SHAPE MISMATCH"
                             : ok           ? "ok"
                                            : "OFF");
  }
  if (compared == 0)
    throw ModelRunError(fmt::format("{} holds no tensor named like an output of this model", referencePath));
  std::cout << fmt::format("parity: {} of {} outputs within bounds\n", compared - failed, compared);
  return failed == 0 ? kOk : kFailure;
}

int runForward(const ForwardCommandOptions& o) {
  ModelOptions modelOptions;
  modelOptions.device = o.device;
  // Parity with the float32 fixtures is float32 parity unless another precision is asked for.
  modelOptions.dtype =
      o.dtype.empty() && !o.expect.empty() ? std::optional(at::kFloat) : parseComputeDtypeChoice(o.dtype);
  const Model model = Model::load(o.model, modelOptions);
  const at::Tensor input = readInput(o.input);

  ForwardOptions forwardOptions;
  forwardOptions.intermediates = o.intermediates;
  const auto start = std::chrono::steady_clock::now();
  const ModelOutputs outputs = model.forward(input, forwardOptions);
  NamedTensors toSave;
  for (const auto& [name, tensor] : outputs.all()) {
    toSave.emplace_back(name, tensor.to(at::kCPU, at::kFloat).contiguous());
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  saveSafetensors(
      o.output, toSave,
      {{"model", o.model}, {"device", model.device().str()}, {"dtype", computeDtypeName(model.dtype())}});

  std::cout << fmt::format("{} model on {} ({}), input {}: {:.1f} ms\n", taskName(model.task()),
                           model.device().str(), computeDtypeName(model.dtype()),
                           fmt::join(input.sizes(), "x"), ms);
  for (const auto& [name, tensor] : toSave)
    std::cout << fmt::format("  {:<18} {}\n", name, fmt::join(tensor.sizes(), "x"));
  std::cout << fmt::format("wrote {}\n", o.output);
  return o.expect.empty() ? kOk : compareWithReference(toSave, o.expect, o.toleranceScale);
}

}  // namespace

static CliCommand reg("forward", [](CLI::App& app) {
  auto o = std::make_shared<ForwardCommandOptions>();
  auto* sub = app.add_subcommand("forward",
                                 "Run the raw model on the tensor named 'input' of a .safetensors file "
                                 "and write its named outputs (F32)");
  sub->add_option("--model", o->model, "Checkpoint (.safetensors)")->required();
  sub->add_option("--input", o->input, "safetensors file with a tensor 'input' (B x 3 x H x W)")->required();
  sub->add_option("--output", o->output, "Where to write the outputs (.safetensors)")->required();
  sub->add_option("--device", o->device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  sub->add_option("--dtype", o->dtype,
                  "auto, fp32, bf16 or fp16 (default: auto, as for run; fp32 with --expect)");
  sub->add_flag(
      "--intermediates", o->intermediates,
      "Also write patch_embed_out, block0_in/out, gqa_block_in/out, last_block_out and the RoPE tables");
  sub->add_option("--expect", o->expect,
                  "Compare the outputs with the same-named tensors of this file at the golden fixtures' "
                  "tolerances (exit code 1 when one is off)");
  sub->add_option("--tolerance-scale", o->toleranceScale, "Multiply those tolerances (e.g. for bf16)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  return CommandAction([o]() -> int { return runForward(*o); });
});

}  // namespace sapiens::cli
