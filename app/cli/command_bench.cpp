// sapiens-cli bench: forward-pass speed of a named architecture with random weights, as a ratio to the
// matrix-product rate of the same device measured in the same run (the "floor").

#include "cli_command.h"
#include "gemm_floor.h"

#include "sapiens/common/resource_usage.h"
#include "sapiens/model/activation_memory.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/flop_count.h"
#include "sapiens/model/forward_parts.h"
#include "sapiens/model/model.h"
#include "sapiens/model/parameter_layout.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

namespace sapiens::cli {
namespace {

struct BenchOptions {
  std::string arch = "0.4b";
  std::string task = "backbone";
  int height = 1024;
  int width = 768;
  int batch = 1;
  std::string device = "auto";
  std::string dtype;
  int iterations = 3;
  int warmup = 1;
  bool json = false;
};

// The timed forwards, each after a floor sample (on a shared machine the load drifts, and both figures
// must see the same conditions for their ratio to mean anything), and on the CPU where their time went.
struct TimedForwards {
  std::vector<double> seconds;
  std::vector<ForwardPartSeconds> parts;  ///< each forward's; CPU only
};

TimedForwards timeForwards(Model& model, const at::Tensor& input, GemmFloor& floor, int iterations,
                           const c10::Device& device) {
  TimedForwards t;
  for (int i = 0; i < std::max(1, iterations); ++i) {
    floor.sample();
    t.seconds.push_back(medianSeconds(1, device, [&] {
      std::optional<ForwardPartClock> clock;
      if (device.is_cpu()) clock.emplace();
      model.forward(input);
      if (clock) t.parts.push_back(clock->elapsed());
    }));
  }
  floor.sample();
  return t;
}

// The parts of the median forward (the one the floor ratio is of), and each part's share of the floor
// ratio: its time over the whole work's time at the floor rate, the three adding up to the ratio. The
// products' own ratio only where their FLOPs are the blocks' linear layers alone: a head's 1x1
// convolutions run as products too.
nlohmann::json partsJson(const TimedForwards& t, const FlopCount& flops, double floorGflops, bool headless) {
  const double seconds = median(t.seconds);
  const std::size_t at =
      std::size_t(std::find(t.seconds.begin(), t.seconds.end(), seconds) - t.seconds.begin());
  const double floorSeconds = flops.total() / 1e9 / floorGflops;
  const double products = t.parts.at(at).products, attention = t.parts.at(at).attention;
  const double rest = seconds - products - attention;
  nlohmann::json parts = {{"products_ms", products * 1e3},
                          {"attention_ms", attention * 1e3},
                          {"attention_floor_ratio", attention / (flops.attention / 1e9 / floorGflops)},
                          {"rest_ms", rest * 1e3},
                          {"share_products", products / floorSeconds},
                          {"share_attention", attention / floorSeconds},
                          {"share_rest", rest / floorSeconds}};
  if (headless) {
    parts["products_gflop"] = flops.linear / 1e9;
    parts["products_floor_ratio"] = products / (flops.linear / 1e9 / floorGflops);
  }
  return parts;
}

void printParts(const nlohmann::json& p) {
  if (p.contains("products_floor_ratio"))
    std::printf(
        "  products       %10.1f ms = %.2f x their %.1f GFLOP at the floor (linear layers, epilogues "
        "fused)\n",
        p["products_ms"].get<double>(), p["products_floor_ratio"].get<double>(),
        p["products_gflop"].get<double>());
  else
    std::printf("  products       %10.1f ms (linear layers and the head's 1x1 convolutions)\n",
                p["products_ms"].get<double>());
  std::printf(
      "  attention      %10.1f ms = %.2f x its GFLOP at the floor (scores, softmax, probabilities x v)\n",
      p["attention_ms"].get<double>(), p["attention_floor_ratio"].get<double>());
  std::printf("  the rest       %10.1f ms (norms, RoPE, copies, patch embedding, head)\n",
              p["rest_ms"].get<double>());
  std::printf("  ratio's parts  %10.2f + %.2f + %.2f (products + attention + rest, median forward)\n",
              p["share_products"].get<double>(), p["share_attention"].get<double>(),
              p["share_rest"].get<double>());
}

void printText(const nlohmann::json& r, const BenchOptions& o) {
  const auto number = [&](const char* key) { return r[key].get<double>(); };
  std::printf("sapiens2 %s %s  %dx%dx%d  %s %s  threads %d\n", o.arch.c_str(),
              r["task"].get<std::string>().c_str(), o.batch, o.height, o.width,
              r["device"].get<std::string>().c_str(), r["dtype"].get<std::string>().c_str(),
              r["threads"].get<int>());
  std::printf("  forward        %10.1f ms (median of %d)\n", number("ms_median"), o.iterations);
  std::printf("  work           %10.1f GFLOP (attention %.1f; 2 FLOP per multiply-add)\n", number("gflop"),
              number("gflop_attention"));
  std::printf("  achieved       %10.1f GFLOP/s\n", number("gflops_achieved"));
  const auto& g = r["floor_gemm"];
  std::printf("  floor          %10.1f GFLOP/s (GEMM %lld x %lld x %lld, between the forwards)\n",
              number("gflops_floor"), g[0].get<long long>(), g[1].get<long long>(), g[2].get<long long>());
  std::printf("  floor ratio    %10.2f x (1.00 = every FLOP at the GEMM rate)\n", number("floor_ratio"));
  if (r.contains("parts")) printParts(r["parts"]);
  std::printf("  weights        %10.1f MB, activations %.1f MB (estimated peak)\n", number("weight_mb"),
              number("activation_mb_estimate"));
  const double above = number("model_peak_rss_mb") - number("rss_before_mb");
  std::printf("  peak RSS       %10.1f MB, %.1f MB above the start = %.2f x (weights + activations)%s\n",
              number("model_peak_rss_mb"), above, number("memory_ratio"),
              o.warmup > 0 ? " over the warm-up" : ", floor included");
  std::printf("  process peak   %10.1f MB (the floor's operands included)\n", number("peak_rss_mb"));
}

int runBench(const BenchOptions& o) {
  const std::optional<Task> parsedTask = parseTask(o.task);
  if (!parsedTask) {
    std::cerr << "bench: unknown task '" << o.task << "' (" << taskNames(allTasks(), ", ") << ")\n";
    return kUsage;
  }
  const Task task = *parsedTask;
  const Architecture arch = officialArchitecture(o.arch, task);
  ModelOptions modelOptions;
  modelOptions.device = o.device;
  const c10::Device device = resolveDevice(o.device);
  const c10::ScalarType dtype = resolveComputeDtype(o.dtype.empty() ? "auto" : o.dtype, device);
  modelOptions.dtype = dtype;
  const int multiple = arch.backbone.inputMultiple();
  if (o.height % multiple || o.width % multiple) {
    std::cerr << "bench: --height and --width must be multiples of " << multiple << " for " << o.arch << "\n";
    return kUsage;
  }

  const double rssBefore = peakResidentMegabytes();
  Model model = Model::random(arch, modelOptions, 0);
  const double weightBytes = static_cast<double>(parameterCount(arch)) * c10::elementSize(dtype);
  c10::InferenceMode inference;
  const at::Tensor input =
      at::randn({o.batch, 3, o.height, o.width}, at::TensorOptions().dtype(dtype).device(device));

  for (int i = 0; i < o.warmup; ++i) model.forward(input);
  // The model's memory: its peak over the warm-up, before the floor's operands exist (without a
  // warm-up, the whole run's peak, floor included).
  const double modelPeakMb = peakResidentMegabytes();
  // The floor: the model's dominant matrix product, same device and dtype, same run. Made after the
  // warm-up so that a batch too large for the device fails in the model, with the model's message.
  GemmFloor floor(dominantGemm(arch, o.batch, o.height, o.width), device, dtype);
  const GemmShape& g = floor.shape();
  const TimedForwards timed = timeForwards(model, input, floor, o.iterations, device);
  const double floorGflops = floor.gflops();
  const double seconds = median(timed.seconds);
  const FlopCount flops = forwardFlops(arch, o.batch, o.height, o.width);
  const double achieved = flops.total() / seconds / 1e9;
  const double floorRatio = floorGflops / achieved;  // = time / (flops / floor rate)

  const double activationBytes =
      static_cast<double>(peakActivationBytes(arch, o.batch, o.height, o.width, c10::elementSize(dtype)));
  // Growth over what the process held before the model existed (libraries, allocator arenas).
  const double modelRssMb = (o.warmup > 0 ? modelPeakMb : peakResidentMegabytes()) - rssBefore;
  const double memoryRatio = modelRssMb / ((weightBytes + activationBytes) / 1e6);
  nlohmann::json result = {{"arch", o.arch},
                           {"task", std::string(taskName(task))},
                           {"device", device.str()},
                           {"dtype", computeDtypeName(dtype)},
                           {"batch", o.batch},
                           {"height", o.height},
                           {"width", o.width},
                           {"iterations", o.iterations},
                           {"ms_median", seconds * 1e3},
                           {"gflop", flops.total() / 1e9},
                           {"gflop_attention", flops.attention / 1e9},
                           {"gflops_achieved", achieved},
                           {"gflops_floor", floorGflops},
                           {"floor_gemm", {g.m, g.k, g.n}},
                           {"floor_ratio", floorRatio},
                           {"weight_mb", weightBytes / 1e6},
                           {"peak_rss_mb", peakResidentMegabytes()},
                           {"model_peak_rss_mb", modelRssMb + rssBefore},
                           {"rss_before_mb", rssBefore},
                           {"activation_mb_estimate", activationBytes / 1e6},
                           {"memory_ratio", memoryRatio},
                           {"threads", at::get_num_threads()}};
  if (device.is_cpu()) result["parts"] = partsJson(timed, flops, floorGflops, task == Task::Backbone);
  if (o.json)
    std::cout << result.dump() << "\n";
  else
    printText(result, o);
  return kOk;
}

CliCommand benchCommand("bench", [](CLI::App& app) -> CommandAction {
  auto o = std::make_shared<BenchOptions>();
  auto* sub = app.add_subcommand("bench",
                                 "Time the forward pass of an official architecture with random weights "
                                 "against the matrix-product floor of the device");
  sub->add_option("--arch", o->arch, "Backbone size: 0.1b 0.4b 0.8b 1b 1b-4k 5b")->capture_default_str();
  sub->add_option("--task", o->task, "backbone, pose, seg, normal, albedo or pointmap")
      ->capture_default_str();
  sub->add_option("--height", o->height, "Input height")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--width", o->width, "Input width")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--batch", o->batch, "Batch size")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--device", o->device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  sub->add_option("--dtype", o->dtype,
                  "auto, fp32, bf16 or fp16 (default auto: bf16 on CUDA; on the CPU bf16 only where it has "
                  "native bf16 and runs it 1.5x faster, else fp32)");
  sub->add_option("--iterations", o->iterations, "Timed forwards (median reported)")->capture_default_str();
  sub->add_option("--warmup", o->warmup, "Untimed forwards first")->capture_default_str();
  sub->add_flag("--json", o->json, "One JSON object on stdout");
  return [o] { return runBench(*o); };
});

}  // namespace
}  // namespace sapiens::cli
