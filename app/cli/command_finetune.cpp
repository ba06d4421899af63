// sapiens-cli finetune: train a task head on a label set with the backbone frozen, report the metric
// before and after, and write the model (or its head) in the official key layout.

#include "cli_command.h"
#include "input_size_option.h"
#include "stop_signals.h"
#include "training_precision_option.h"

#include "sapiens/common/log.h"
#include "sapiens/finetune/fine_tuner.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"

#include <fmt/format.h>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace sapiens::cli {
namespace {

struct FinetuneArgs {
  std::string labels;
  std::string model;
  std::string task;
  int steps = 500;
  std::string output;
  std::string device = "cpu";
  double validationSplit = 0.2;
  std::string inputSize;
  std::string learningRate = "auto";
  int batch = 4;
  bool headOnly = false;
  bool noFlip = false;
  int colorVariants = 0;
  bool freshHead = false;
  bool trainEverything = false;
  double keepWeight = TrainingSettings{}.keepStartingHeadWeight;
  int snapshotEvery = 0;
  std::string snapshotFolder;
  int evaluateEvery = 50;
  std::uint64_t seed = 0;
  std::string precision = "auto";
};

TrainingControl* activeControl = nullptr;

std::string duration(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}h{:02d}m", s / 3600, s / 60 % 60)
                   : fmt::format("{}m{:02d}s", s / 60, s % 60);
}

void showProgress(const TrainingProgress& p, const MetricInfo& metric, bool terminal) {
  std::string line =
      fmt::format("step {}/{} loss {:.4f} lr {:.2e} {:.1f} steps/s, {} left", p.step, p.totalSteps,
                  p.trainLoss, p.learningRate, p.stepsPerSecond, duration(p.secondsLeft));
  if (p.validation)
    line += fmt::format(", val loss {:.4f} {} {:.4f}", p.validation->loss, metric.name, p.validation->metric);
  if (!p.snapshot.empty()) line += ", snapshot " + p.snapshot;
  if (terminal) {
    const int width = 24;
    const int filled = p.totalSteps ? width * p.step / p.totalSteps : width;
    std::fprintf(stderr, "\r[%s%s] %s\033[K", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), line.c_str());
    if (p.step == p.totalSteps || p.validation) std::fprintf(stderr, "\n");
  } else if (p.validation || !p.snapshot.empty() || p.step == p.totalSteps || p.step % 10 == 0) {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

int runFinetune(const FinetuneArgs& a) {
  const std::optional<Task> task = parseTask(a.task);
  if (!task || *task == Task::Backbone) {
    std::cerr << "finetune: --task must be one of " << taskNames(headTasks(), ", ") << ", not '" << a.task
              << "'\n";
    return kUsage;
  }
  TrainingSettings settings;
  settings.steps = a.steps;
  settings.batchSize = a.batch;
  if (a.learningRate != "auto") {
    try {
      std::size_t used = 0;
      settings.learningRate = std::stod(a.learningRate, &used);
      if (used != a.learningRate.size() || !(settings.learningRate > 0)) throw std::invalid_argument("");
    } catch (const std::exception&) {
      std::cerr << "finetune: --lr must be a positive number or auto, not '" << a.learningRate << "'\n";
      return kUsage;
    }
  }
  settings.validationFraction = a.validationSplit;
  if (!a.inputSize.empty()) settings.inputSize = inputSizeOption(a.inputSize);
  settings.horizontalFlip = !a.noFlip;
  settings.colorVariants = a.colorVariants;
  settings.freshHead = a.freshHead;
  settings.keepUntaught = !a.trainEverything;
  settings.keepStartingHeadWeight = a.keepWeight;
  settings.snapshotEvery = a.snapshotEvery;
  settings.snapshotFolder = a.snapshotFolder;
  settings.evaluateEvery = a.evaluateEvery;
  settings.seed = a.seed;
  settings.precision = *parseTrainingPrecision(a.precision);  // checked by the option

  LabelSet labels = openLabelSet(a.labels, *task);
  Model model = loadModelForFineTuning(a.model, *task, a.device);

  FineTuner tuner(std::move(model), std::move(labels), settings);
  TrainingControl control;
  activeControl = &control;
  onStopSignals([](int) {
    if (activeControl) activeControl->stop();
  });
  const bool terminal = isatty(STDERR_FILENO);
  std::fprintf(stderr, "computing backbone features...\n");
  if (!tuner.prepare(control)) return kFailure;
  if (!tuner.learningRateTrials().empty()) {
    std::fprintf(stderr, "learning rate %.0e, chosen by a range test (%s)\n", tuner.settings().learningRate,
                 describeLearningRateTrials(tuner.learningRateTrials()).c_str());
  }
  const MetricInfo metric = tuner.metric();
  const TrainingReport report =
      tuner.train(control, [&](const TrainingProgress& p) { showProgress(p, metric, terminal); });
  activeControl = nullptr;

  tuner.save(a.output, !a.headOnly);
  std::cout << fmt::format("finetune: {} steps{} in {}, training loss {:.4f} -> {:.4f}\n", report.steps,
                           report.stopped ? " (stopped)" : "", duration(report.secondsTraining),
                           report.firstLoss, report.lastLoss);
  std::cout << fmt::format("  training frames:   {}, loss {:.4f} -> {:.4f} ({} samples)\n",
                           describeMetricChange(metric, report.trainingBefore, report.trainingAfter),
                           report.trainingBefore.loss, report.trainingAfter.loss,
                           report.trainingAfter.samples);
  if (report.validationAfter) {
    std::cout << fmt::format("  validation frames: {}, loss {:.4f} -> {:.4f} ({} samples)\n",
                             describeMetricChange(metric, *report.validationBefore, *report.validationAfter),
                             report.validationBefore->loss, report.validationAfter->loss,
                             report.validationAfter->samples);
  } else {
    std::cout << "  validation frames: none\n";
  }
  std::cout << fmt::format("wrote {} ({})\n", a.output, a.headOnly ? "head only" : "full model");
  return report.stopped ? kPartial : kOk;
}

}  // namespace

static CliCommand reg("finetune", [](CLI::App& app) {
  auto a = std::make_shared<FinetuneArgs>();
  auto* sub =
      app.add_subcommand("finetune",
                         "Train a task head on a label set (backbone frozen) and save the model in the "
                         "official key layout");
  sub->add_option("--labels", a->labels, "Label set folder, or a folder with images/ and masks/ (seg)")
      ->required();
  sub->add_option("--model", a->model, "Checkpoint to start from (.safetensors)")->required();
  sub->add_option("--task", a->task, taskNames(headTasks(), ", "))->required();
  sub->add_option("--steps", a->steps, "Training steps")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("-o,--output", a->output, "Where to write the trained model (.safetensors)")->required();
  sub->add_option("--device", a->device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  sub->add_option("--val-split", a->validationSplit,
                  "Share of the frames (split \"auto\") held out for validation")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  sub->add_option("--input-size", a->inputSize, "Network input HxW, multiples of 16 (default 1024x768)");
  sub->add_option("--lr", a->learningRate,
                  "Peak learning rate (AdamW), or auto: a short range test on the labelled frames picks it")
      ->capture_default_str();
  sub->add_option("--batch", a->batch, "Samples per step")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_flag("--head-only", a->headOnly, "Write the head alone (decode_head.*), not the full model");
  sub->add_flag("--no-flip", a->noFlip, "No horizontal-flip variants");
  sub->add_option("--color-variants", a->colorVariants,
                  "Photometric variants per sample (one backbone pass each)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--fresh-head", a->freshHead, "Start from a freshly initialised head");
  sub->add_flag("--train-everything", a->trainEverything,
                "Train the whole head on the labels alone. By default training keeps what the frames do "
                "not teach: when some seg class or keypoint is labelled on no frame, the starting head "
                "keeps feeding it, beside a trained copy for what is labelled (the head doubles in width), "
                "and whatever a frame leaves unlabelled takes the starting head's prediction as its target");
  sub->add_option("--keep-weight", a->keepWeight,
                  "Weight of the starting head's prediction as the target where a frame labels nothing "
                  "(unpainted pixels, keypoints not placed), relative to a label; 0: none")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--snapshot-every", a->snapshotEvery, "Steps between snapshots (0: none)")
      ->capture_default_str();
  sub->add_option("--snapshot-dir", a->snapshotFolder, "Folder for snapshot-step-N.safetensors");
  sub->add_option("--eval-every", a->evaluateEvery, "Steps between validation passes")->capture_default_str();
  sub->add_option("--seed", a->seed, "Seed of the split, the batches and fresh heads")->capture_default_str();
  sub->add_option("--precision", a->precision,
                  "Training steps in fp32 or bf16 mixed precision (CPU; float32 weights); auto: bf16 where "
                  "the CPU has native bf16")
      ->capture_default_str()
      ->check(trainingPrecisionOption());
  return CommandAction([a]() -> int { return runFinetune(*a); });
});

}  // namespace sapiens::cli
