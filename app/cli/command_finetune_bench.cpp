// sapiens-cli finetune-bench: the cost of a fine-tuning step on cached backbone features against a step
// that recomputes the backbone, on an official architecture with random weights and a synthetic label set.

#include "cli_command.h"
#include "gemm_floor.h"
#include "training_precision_option.h"

#include "sapiens/common/resource_usage.h"
#include "sapiens/finetune/fine_tuner.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/model/architecture.h"
#include "sapiens/model/flop_count.h"
#include "sapiens/model/model.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include <unistd.h>

namespace sapiens::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct FinetuneBenchArgs {
  std::string arch = "0.4b";
  std::string task = "seg";
  int height = 512;
  int width = 384;
  int batch = 2;
  int steps = 3;
  // Before the timed ones: a step's peak memory is above the last one's for the first few steps (the
  // heap grows to its steady size), and a timed step would pay for touching those new pages.
  int untimedSteps = 3;
  std::string device = "cpu";
  std::string precision = "auto";
  bool json = false;
};

LabelSet syntheticLabels(Task task, const std::string& folder, int frames, InputSize size) {
  LabelSet labels;
  labels.folder = folder;
  labels.task = task;
  cv::RNG rng(7);
  for (int i = 0; i < frames; ++i) {
    FrameLabels frame;
    frame.image = cv::Mat(size.height, size.width, CV_8UC3);
    rng.fill(frame.image, cv::RNG::UNIFORM, 0, 255);
    if (task == Task::Seg) {
      frame.mask = cv::Mat(size.height, size.width, CV_8UC1);
      rng.fill(frame.mask, cv::RNG::UNIFORM, 0, 29);
    } else if (task == Task::Pose) {
      PersonLabel person;
      for (int k = 0; k < 308; ++k)
        person.keypoints.push_back(
            {rng.uniform(0.0, size.width - 1.0), rng.uniform(0.0, size.height - 1.0), 2});
      frame.people.push_back(person);
    } else {
      frame.target = cv::Mat(size.height, size.width, CV_32FC3, cv::Scalar(0.2, 0.3, 0.9));
    }
    addFrame(labels, "frame" + std::to_string(i), frame, FrameSplit::Train);
  }
  return labels;
}

// The backbone as a recomputing trainer would run it: the step's samples in one frozen forward pass
// (median of three, after preparation has warmed the model up), per sample.
double backboneSecondsPerSample(const FineTuner& tuner) {
  std::vector<at::Tensor> inputs;
  for (std::size_t i = 0; i < tuner.samples().size(); ++i) inputs.push_back(tuner.sampleInput(i));
  const at::Tensor batchInput = at::cat(inputs, 0);
  std::vector<double> runs;
  for (int run = 0; run < 3; ++run) {
    const auto start = Clock::now();
    const at::Tensor features = tuner.model().backboneFeatures(batchInput);
    runs.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(runs.begin(), runs.end());
  return runs[1] / static_cast<double>(inputs.size());
}

int runFinetuneBench(const FinetuneBenchArgs& a) {
  const std::optional<Task> task = parseTask(a.task);
  if (!task ||
      (*task != Task::Seg && *task != Task::Pose && *task != Task::Normal && *task != Task::Albedo)) {
    std::cerr << "finetune-bench: --task must be seg, pose, normal or albedo\n";
    return kUsage;
  }
  const InputSize size{a.width, a.height};
  ModelOptions options;
  options.device = a.device;
  options.dtype = at::kFloat;
  Model model = Model::random(officialArchitecture(a.arch, *task), options);

  const fs::path folder = fs::temp_directory_path() / fmt::format("sapiens-finetune-bench-{}", ::getpid());
  TrainingSettings settings;
  settings.steps = a.steps + a.untimedSteps;
  settings.batchSize = a.batch;
  settings.inputSize = size;
  settings.horizontalFlip = false;
  settings.validationFraction = 0;
  settings.evaluateEvery = 0;
  settings.learningRate = 5e-4;  // a given rate: no range test before the timed steps
  settings.precision = *parseTrainingPrecision(a.precision);  // checked by the option
  FineTuner tuner(std::move(model), syntheticLabels(*task, folder.string(), a.batch, size), settings);
  TrainingControl control;

  tuner.prepare(control);
  const double backboneSeconds = backboneSecondsPerSample(tuner);
  // Steady-state cached steps: the steps' own time (TrainingReport::secondsTraining, which leaves out
  // the evaluations train() runs at its end) after the untimed ones; how much the peak memory still grew
  // after those (timed steps, and the evaluations at the end, which the callback cannot separate) says
  // whether they were steady.
  // The floor: the backbone's dominant matrix product on the same device, in the steps' precision,
  // sampled before and after the timed steps.
  GemmFloor floor(dominantGemm(tuner.model().architecture(), 1, a.height, a.width), tuner.model().device(),
                  tuner.precision() == TrainingPrecision::BFloat16 ? at::kBFloat16 : at::kFloat);
  floor.sample();
  double untimedSeconds = 0, peakBeforeTimedMb = 0;
  const auto trainStart = Clock::now();
  const TrainingReport report = tuner.train(control, [&](const TrainingProgress& p) {
    if (p.step != a.untimedSteps) return;
    untimedSeconds = std::chrono::duration<double>(Clock::now() - trainStart).count();
    peakBeforeTimedMb = peakResidentMegabytes();
  });
  const double peakGrowthAfterUntimedMb = peakResidentMegabytes() - peakBeforeTimedMb;
  floor.sample();
  const double cachedStep = (report.secondsTraining - untimedSeconds) / a.steps;
  const double recomputeStep = cachedStep + a.batch * backboneSeconds;
  // What the work allows: a head step is the head's forward plus the gradients of its activations and
  // of its weights (about twice the forward), less the input gradient of the layers reading the frozen
  // backbone's features; recomputing adds a backbone forward per sample.
  const FlopCount flops = forwardFlops(tuner.model().architecture(), a.batch, a.height, a.width);
  const double stepFlops = 3.0 * flops.head - flops.headOnFeatures;
  const double stepGflop = stepFlops / 1e9;
  const double boundSpeedup = (stepFlops + flops.backbone) / stepFlops;
  const double floorGflops = floor.gflops();
  const double floorRatio = cachedStep / (stepFlops / (floorGflops * 1e9));  // 1.00: every FLOP at the floor
  std::error_code ec;
  fs::remove_all(folder, ec);

  if (a.json) {
    std::cout << nlohmann::json{{"arch", a.arch},
                                {"task", a.task},
                                {"input", {a.height, a.width}},
                                {"batch", a.batch},
                                {"device", tuner.model().device().str()},
                                {"precision", trainingPrecisionName(tuner.precision())},
                                {"backbone_seconds_per_sample", backboneSeconds},
                                {"cached_step_seconds", cachedStep},
                                {"recompute_step_seconds", recomputeStep},
                                {"speedup", recomputeStep / cachedStep},
                                {"head_step_gflop", stepGflop},
                                {"backbone_gflop", flops.backbone / 1e9},
                                {"flop_bound_speedup", boundSpeedup},
                                {"gflops_floor", floorGflops},
                                {"floor_gemm", {floor.shape().m, floor.shape().k, floor.shape().n}},
                                {"step_floor_ratio", floorRatio},
                                {"untimed_steps", a.untimedSteps},
                                {"peak_rss_growth_mb_after_untimed_steps", peakGrowthAfterUntimedMb}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << fmt::format(
        "{} {} at {}x{}, batch {}, {}, steps in {}: backbone {:.3f} s/sample; training step on cached "
        "features {:.3f} s, "
        "recomputing the backbone {:.3f} s: {:.1f}x faster (at equal FLOP rates {:.1f}x: head step {:.1f} "
        "GFLOP, "
        "backbone {:.1f} GFLOP; step at {:.1f} GFLOP/s, backbone at {:.1f} GFLOP/s)\n"
        "  step floor ratio {:.2f}x (the step's time over its FLOPs at the floor, {:.1f} GFLOP/s: GEMM {} x "
        "{} x {})\n"
        "  {} timed steps after {} untimed; peak RSS grew by {:.0f} MB after the untimed ones (timed steps "
        "and final evaluations)\n",
        a.arch, a.task, a.height, a.width, a.batch, tuner.model().device().str(),
        trainingPrecisionName(tuner.precision()), backboneSeconds, cachedStep, recomputeStep,
        recomputeStep / cachedStep, boundSpeedup, stepGflop, flops.backbone / 1e9, stepGflop / cachedStep,
        flops.backbone / 1e9 / (a.batch * backboneSeconds), floorRatio, floorGflops, floor.shape().m,
        floor.shape().k, floor.shape().n, a.steps, a.untimedSteps, peakGrowthAfterUntimedMb);
  }
  return kOk;
}

}  // namespace

static CliCommand reg("finetune-bench", [](CLI::App& app) {
  auto a = std::make_shared<FinetuneBenchArgs>();
  auto* sub =
      app.add_subcommand("finetune-bench",
                         "Time a fine-tuning step on cached backbone features against recomputing the "
                         "backbone (random weights, synthetic labels)");
  sub->add_option("--arch", a->arch, "Official size")->capture_default_str();
  sub->add_option("--task", a->task, "seg, pose, normal or albedo")->capture_default_str();
  sub->add_option("--height", a->height, "Input height (multiple of 16)")->capture_default_str();
  sub->add_option("--width", a->width, "Input width (multiple of 16)")->capture_default_str();
  sub->add_option("--batch", a->batch, "Samples per step")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--steps", a->steps, "Timed steps")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--untimed-steps", a->untimedSteps,
                  "Steps before the timed ones (the first steps grow the heap to its steady size)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--device", a->device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  sub->add_option("--precision", a->precision, "Training steps in auto, fp32 or bf16 (mixed)")
      ->capture_default_str()
      ->check(trainingPrecisionOption());
  sub->add_flag("--json", a->json, "Print JSON");
  return CommandAction([a]() -> int { return runFinetuneBench(*a); });
});

}  // namespace sapiens::cli
