#include "sapiens/finetune/fine_tuner.h"

#include "adamw.h"
#include "mixed_precision.h"
#include "pipeline/preprocess.h"
#include "sapiens/common/log.h"
#include "sapiens/finetune/finetuned_model_file.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"
#include "task_losses.h"
#include "taught_branch.h"
#include "training_samples.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>

namespace sapiens {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The range test's candidates span what suits a head alone: from the official full-network rate's
// neighbourhood up to where a freshly initialised head still trains.
constexpr double kRateCandidates[] = {3e-4, 1e-3, 3e-3, 1e-2, 3e-2};
constexpr int kRateTrialSteps = 8;
constexpr std::size_t kRateProbeSamples = 16;
// Seg masks leaving fewer of the training pixels than this unpainted label everything (see taughtOutputs).
constexpr double kCompleteMaskShare = 0.01;
// Should every candidate give a non-finite loss.
constexpr double kFallbackRate = 1e-3;
// The most the starting head's cached seg logits take (see cacheStartingOutputs).
constexpr std::size_t kStartingOutputsBytes = std::size_t{1} << 30;

}  // namespace

struct FineTuner::State {
  Model model;
  LabelSet labels;
  TrainingSettings settings;
  std::shared_ptr<FeatureCache> cache;
  std::string baseCheckpoint;
  std::string backboneFingerprint;
  std::vector<LabelClass> classes;
  bool keepsStartingHead = false;  // keepUntaught, and the head came from the checkpoint
  TrainingPrecision precision = TrainingPrecision::Float32;  // of the training steps, resolved
  std::int64_t classCount = 0;
  at::Tensor classWeights;
  detail::FlipTables flip;

  std::vector<SampleInfo> infos;
  std::vector<detail::SampleTargets> targets;
  std::vector<std::string> keys;
  std::vector<std::size_t> trainSamples;       // every variant
  std::vector<std::size_t> trainEvalSamples;   // variant 0 of the training frames
  std::vector<std::size_t> validationSamples;  // variant 0 of the validation frames
  bool prepared = false;

  std::vector<at::Tensor> headTensors;  // the trained parameters: in place in the model, or the branch's copy
  std::vector<bool> headDecay;          // whether each gets weight decay
  // Keeping what is not taught (see taught_branch.h): the copy that trains, and per sample the starting
  // head's seg logits where they fit kStartingOutputsBytes (pose takes them from its targets).
  std::optional<detail::TaughtBranchTraining> branches;
  std::vector<at::Tensor> startingOutputs;
  bool modelBehind = false;  // the branches trained since the model's head was last set from them
  std::unique_ptr<detail::AdamW> optimizer;
  std::vector<LearningRateTrial> rateTrials;
  std::atomic<int> step{0};  // read by other threads (progress displays)
  std::mt19937_64 generator;
  std::vector<std::size_t> order;
  std::size_t orderPosition = 0;
  double firstLoss = std::numeric_limits<double>::quiet_NaN();
  double secondsTraining = 0;
  Evaluation trainingBefore;
  std::optional<Evaluation> validationBefore;
  Evaluation trainingLast;
  std::optional<Evaluation> validationLast;

  explicit State(Model m) : model(std::move(m)) {}

  at::Tensor features(const std::vector<std::size_t>& batch) const {
    std::vector<at::Tensor> parts;
    for (std::size_t index : batch) {
      const std::optional<at::Tensor> found = cache->find(keys[index]);
      if (!found) throw ModelRunError(fmt::format("features of sample {} left the cache", index));
      parts.push_back(*found);
    }
    return at::cat(parts).to(model.device(), model.dtype());
  }

  detail::SampleTargets batchTargets(const std::vector<std::size_t>& batch) const {
    std::vector<const detail::SampleTargets*> parts;
    for (std::size_t index : batch) parts.push_back(&targets[index]);
    detail::SampleTargets stacked = detail::stackTargets(parts);
    for (auto field : detail::kSampleTargetFields) {
      if ((stacked.*field).defined()) stacked.*field = (stacked.*field).to(model.device());
    }
    return stacked;
  }

  std::vector<std::size_t> nextBatch() {
    std::vector<std::size_t> batch;
    const auto size = static_cast<std::size_t>(std::max(1, settings.batchSize));
    while (batch.size() < std::min(size, trainSamples.size())) {
      if (orderPosition >= order.size()) {
        order = trainSamples;
        std::shuffle(order.begin(), order.end(), generator);
        orderPosition = 0;
      }
      batch.push_back(order[orderPosition++]);
    }
    return batch;
  }

  std::unique_ptr<detail::AdamW> freshOptimizer() const {
    detail::AdamW::Options options;
    options.weightDecay = settings.weightDecay;
    return std::make_unique<detail::AdamW>(headTensors, headDecay, options);
  }

  // The head's outputs on `batch`, whose targets are `t`; with gradients when `training`.
  ModelOutputs headOutputs(const std::vector<std::size_t>& batch, const detail::SampleTargets& t,
                           bool training) const {
    const at::Tensor featmap = features(batch);
    if (!branches) {
      ForwardOptions options;
      options.inferenceMode = !training;
      return model.forwardHead(featmap, options);
    }
    std::optional<at::NoGradGuard> noGrad;
    if (!training) noGrad.emplace();
    ModelOutputs outputs;
    outputs.add(branches->outputName(), branches->forward(featmap, untaughtOutputs(batch, featmap, t)));
    return outputs;
  }

  // What the starting head predicts on `batch`, for the two-branch head's untaught outputs.
  at::Tensor untaughtOutputs(const std::vector<std::size_t>& batch, const at::Tensor& featmap,
                             const detail::SampleTargets& t) const {
    // A training sample's pose target holds the starting head's heatmap for every keypoint it leaves
    // unplaced (addStartingHeadTargets), so for every untaught one; a validation frame may place those.
    if (model.task() == Task::Pose) {
      const bool training = std::none_of(batch.begin(), batch.end(),
                                         [&](std::size_t index) { return infos[index].validation; });
      return training ? t.heatmaps : branches->startingOutputs(featmap);
    }
    std::vector<at::Tensor> cached;
    for (std::size_t index : batch) {
      if (index >= startingOutputs.size() || !startingOutputs[index].defined())
        return branches->startingOutputs(featmap);
      cached.push_back(startingOutputs[index]);
    }
    return at::stack(cached).to(featmap.device());
  }

  // The model runs (and saves) the two-branch head as trained so far.
  void updateModelHead() {
    if (!branches || !modelBehind) return;
    const detail::TaughtBranchHead& widened = branches->widened();
    model.setHead(widened.head, widened.tensors, baseCheckpoint);
    modelBehind = false;
  }

  // One optimisation step on `batch` at `learningRate`; returns the batch's loss before the step.
  // One optimiser step on `batch`. Returns the loss and, when the step was refused because the loss, the
  // gradients or the updated head would not be finite, why; the head is then left as it was.
  struct StepResult {
    double loss = 0;
    std::string divergence;
    bool lossNotFinite = false;  // the head the step started from already fails
  };
  StepResult trainStep(detail::AdamW& adam, const std::vector<std::size_t>& batch, double learningRate) {
    const detail::SampleTargets t = batchTargets(batch);
    ModelOutputs outputs;
    {
      const detail::MixedPrecisionScope mixed(precision == TrainingPrecision::BFloat16);
      outputs = headOutputs(batch, t, /*training=*/true);
    }
    const at::Tensor loss = detail::taskLoss(model.task(), detail::inFloat32(outputs), t, classWeights);
    StepResult result{loss.item<double>(), {}};
    if (!std::isfinite(result.loss)) {
      result.divergence = fmt::format("the training loss is {}", result.loss);
      result.lossNotFinite = true;
      return result;
    }
    adam.zeroGrad();
    loss.backward();
    const double norm = adam.clipGradientNorm(settings.gradientClip);
    if (!std::isfinite(norm)) {
      result.divergence = fmt::format("the gradients are not finite (norm {})", norm);
    } else if (!adam.step(learningRate)) {
      result.divergence = fmt::format(
          "the update at learning rate {:.2e} would make the head's weights "
          "NaN or infinite",
          learningRate);
    } else {
      headTensorsChanged();
    }
    return result;
  }

  // Stops training after a refused step, leaving the last head whose loss was finite: the head the step
  // started from, or, when that head's own loss was not finite, the head before it (`previousHead`), whose
  // snapshot of the step in between is removed. Throws TrainingDivergedError.
  [[noreturn]] void stopDiverged(const StepResult& result, const std::vector<at::Tensor>& previousHead,
                                 const std::string& snapshotOfTheFailingHead) {
    const int failedStep = step + 1;
    if (result.lossNotFinite && !previousHead.empty()) {
      at::NoGradGuard noGrad;
      for (std::size_t i = 0; i < headTensors.size(); ++i) headTensors[i].copy_(previousHead[i]);
      headTensorsChanged();
      --step;
      std::error_code ignored;
      if (!snapshotOfTheFailingHead.empty()) fs::remove(snapshotOfTheFailingHead, ignored);
    }
    throw TrainingDivergedError(
        failedStep, step,
        fmt::format("Training diverged at step {}: {}. The head is kept as it was after step {}, the last "
                    "with a finite loss; try a lower learning rate or check the labels",
                    failedStep, result.divergence, step));
  }

  void headTensorsChanged() {
    if (!branches) return;
    branches->copyChanged();
    modelBehind = true;
  }

  // Which outputs (classes, keypoints) some training sample labels; undefined when the frames label
  // everything: seg masks that leave (almost) no pixel unpainted say what every pixel is not, too, so the
  // whole head learns from them.
  at::Tensor taughtOutputs() const {
    at::Tensor taught = at::zeros({classCount}, at::kBool);
    double pixels = 0, unpainted = 0;
    for (std::size_t index : trainSamples) {
      const detail::SampleTargets& t = targets[index];
      if (model.task() == Task::Pose) {
        taught.logical_or_(t.weights > 0);
      } else {
        const at::Tensor labels = t.labels.to(at::kLong);
        const at::Tensor painted = labels != kIgnoreLabel;
        taught.logical_or_(at::bincount(labels.masked_select(painted), {}, classCount) > 0);
        pixels += static_cast<double>(labels.numel());
        unpainted += static_cast<double>(labels.numel()) - painted.sum().item<double>();
      }
    }
    if (model.task() == Task::Seg && unpainted < kCompleteMaskShare * pixels) return {};
    return taught;
  }

  // The head tensors that train and where. Keeping what is not taught (seg, pose) with some output that
  // no training frame labels, the head is first widened to the starting head beside a copy that feeds the
  // labelled outputs alone (taught_branch.h), and only the copy trains.
  void chooseTrainedTensors() {
    const bool separable = model.task() == Task::Seg || model.task() == Task::Pose;
    if (keepsStartingHead && separable && !trainSamples.empty() && !branches) {
      const at::Tensor taught = taughtOutputs();
      const std::int64_t count = taught.defined() ? taught.sum().item<std::int64_t>() : classCount;
      const char* outputs = model.task() == Task::Pose ? "keypoints" : "classes";
      if (!taught.defined()) {
        logger().info("The masks label (almost) every pixel: the whole head trains");
      } else if (count < classCount) {
        std::map<std::string, at::Tensor> tensors;
        for (auto& [name, tensor] : model.headParameters()) tensors[name] = tensor.detach();
        branches.emplace(model.task(), model.architecture().head, std::move(tensors), taught);
        const detail::TaughtBranchHead& widened = branches->widened();
        model.setHead(widened.head, widened.tensors, baseCheckpoint);
        logger().info(
            "Keeping what the frames do not teach: the {} {} nobody labelled keep the starting head; the {} "
            "labelled train in a copy of it beside the original (the head doubles in width)",
            classCount - count, outputs, count);
      } else {
        logger().info("Every one of the head's {} {} is labelled somewhere: the whole head trains",
                      classCount, outputs);
      }
    }
    headTensors.clear(), headDecay.clear();
    std::vector<std::pair<std::string, at::Tensor>> trained;
    if (branches) {
      const std::vector<at::Tensor> tensors = branches->trainedTensors();
      const std::vector<std::string> names = branches->trainedNames();
      for (std::size_t i = 0; i < tensors.size(); ++i) trained.emplace_back(names[i], tensors[i]);
    } else {
      trained = model.headParameters();
    }
    for (auto& [name, tensor] : trained) {
      tensor.requires_grad_(true);
      headTensors.push_back(tensor);
      const bool bias = name.size() >= 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
      headDecay.push_back(tensor.dim() > 1 && !bias);
    }
    optimizer = freshOptimizer();
  }

  // The starting head's seg logits per sample, kept while they fit kStartingOutputsBytes: the
  // two-branch head's untaught outputs, which would otherwise be recomputed every step.
  void cacheStartingOutputs() {
    startingOutputs.clear();
    if (!branches || model.task() != Task::Seg) return;
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < infos.size(); ++i) {
      at::Tensor output = branches->startingOutputs(features({i}))[0];
      bytes += static_cast<std::size_t>(output.numel() * output.element_size());
      if (bytes > kStartingOutputsBytes) {
        logger().info("The starting head's outputs do not fit {} MB: they are recomputed at each step",
                      kStartingOutputsBytes >> 20);
        startingOutputs.clear();
        return;
      }
      startingOutputs.push_back(std::move(output));
    }
  }

  // The learning-rate range test: from the same starting head, a few steps at each candidate rate on the
  // same batches, then the loss on the training frames; the rate whose loss fell furthest wins. The head
  // is put back as it was. Returns 0 when stopped.
  double chooseLearningRate(const TrainingControl& control, const RateTrialCallback& onTrial) {
    std::vector<at::Tensor> start;
    for (const at::Tensor& p : headTensors) start.push_back(p.detach().clone());
    const auto restore = [&] {
      at::NoGradGuard noGrad;
      for (std::size_t i = 0; i < headTensors.size(); ++i) headTensors[i].copy_(start[i]);
      headTensorsChanged();
    };
    std::vector<std::size_t> probe = trainEvalSamples;
    if (probe.size() > kRateProbeSamples) probe.resize(kRateProbeSamples);
    std::mt19937_64 batchGenerator(settings.seed + 1);
    std::vector<std::vector<std::size_t>> batches;
    for (int i = 0; i < kRateTrialSteps; ++i) {
      std::vector<std::size_t> batch;
      std::sample(trainSamples.begin(), trainSamples.end(), std::back_inserter(batch),
                  static_cast<std::size_t>(std::max(1, settings.batchSize)), batchGenerator);
      batches.push_back(std::move(batch));
    }
    rateTrials.clear();
    double best = 0, bestLoss = std::numeric_limits<double>::infinity();
    for (double rate : kRateCandidates) {
      if (control.stopRequested()) break;
      const std::unique_ptr<detail::AdamW> adam = freshOptimizer();
      bool diverged = false;
      for (const std::vector<std::size_t>& batch : batches)
        if (diverged = !trainStep(*adam, batch, rate).divergence.empty(); diverged) break;
      const double loss = diverged ? std::numeric_limits<double>::infinity() : evaluate(probe).loss;
      restore();
      rateTrials.push_back({rate, loss});
      if (onTrial) onTrial(rateTrials.size(), std::size(kRateCandidates), rateTrials.back());
      logger().debug("learning-rate range test: {:.0e} -> loss {:.4f}", rate, loss);
      if (std::isfinite(loss) && loss < bestLoss) best = rate, bestLoss = loss;
    }
    return control.stopRequested() ? 0.0 : best;
  }

  Evaluation evaluate(const std::vector<std::size_t>& samples) const {
    Evaluation result;
    detail::MetricAccumulator metric(model.task(), classCount);
    const auto size = static_cast<std::size_t>(std::max(1, settings.batchSize));
    double lossSum = 0;
    for (std::size_t start = 0; start < samples.size(); start += size) {
      const std::vector<std::size_t> batch(
          samples.begin() + static_cast<std::ptrdiff_t>(start),
          samples.begin() + static_cast<std::ptrdiff_t>(std::min(samples.size(), start + size)));
      const detail::SampleTargets t = batchTargets(batch);
      const ModelOutputs outputs = headOutputs(batch, t, /*training=*/false);
      lossSum += detail::taskLoss(model.task(), outputs, t, classWeights).item<double>() * batch.size();
      metric.add(outputs, t);
    }
    result.samples = samples.size();
    result.loss = samples.empty() ? 0 : lossSum / samples.size();
    result.metric = metric.value();
    result.allClassMetric = metric.allClassValue();
    return result;
  }
};

namespace {

std::vector<LabelClass> defaultClasses(Task task) {
  std::vector<LabelClass> classes;
  if (task == Task::Seg) {
    for (std::size_t i = 0; i < seg29().size(); ++i)
      classes.push_back({seg29().names[i], seg29().palette[i], std::nullopt});
  } else if (task == Task::Pose) {
    for (std::size_t i = 0; i < keypoints308().size(); ++i)
      classes.push_back({keypoints308().names[i], keypoints308().keypointColors[i], std::nullopt});
  }
  return classes;
}

nlohmann::json settingsJson(const TrainingSettings& s) {
  return {{"steps", s.steps},
          {"batch_size", s.batchSize},
          {"learning_rate", s.learningRate},
          {"weight_decay", s.weightDecay},
          {"gradient_clip", s.gradientClip},
          {"warmup_steps", effectiveWarmupSteps(s)},
          {"schedule", "linear warm-up from 1e-3, cosine to 0"},
          {"validation_fraction", s.validationFraction},
          {"input_size", {s.inputSize.height, s.inputSize.width}},
          {"horizontal_flip", s.horizontalFlip},
          {"color_variants", s.colorVariants},
          {"fresh_head", s.freshHead},
          {"keep_untaught", s.keepUntaught},
          {"keep_starting_head_weight", s.keepStartingHeadWeight},
          {"seed", s.seed}};
}

nlohmann::json evaluationJson(const Evaluation& e) {
  nlohmann::json json{{"loss", e.loss}, {"metric", e.metric}, {"samples", e.samples}};
  if (e.allClassMetric) json["metric_all_classes"] = *e.allClassMetric;
  return json;
}

}  // namespace

FineTuner::FineTuner(Model model, LabelSet labels, TrainingSettings settings,
                     std::shared_ptr<FeatureCache> cache)
    : state_(std::make_unique<State>(std::move(model))) {
  State& s = *state_;
  s.labels = std::move(labels);
  s.settings = std::move(settings);
  s.cache = cache
                ? std::move(cache)
                : std::make_shared<FeatureCache>(s.settings.featureCacheBytes, s.settings.featureCacheFolder);
  s.baseCheckpoint = s.model.source();
  s.generator.seed(s.settings.seed);
  const Task task = s.model.task();
  if (task != s.labels.task) {
    throw ModelRunError(fmt::format("{} is a {} model but the label set {} holds {} labels", s.baseCheckpoint,
                                    taskName(task), s.labels.folder, taskName(s.labels.task)));
  }
  if (s.model.dtype() != at::kFloat) {
    throw ModelRunError(fmt::format("fine-tuning needs a float32 model, {} was loaded as {}",
                                    s.baseCheckpoint, computeDtypeName(s.model.dtype())));
  }
  if (s.labels.frames.empty()) throw LabelSetError(s.labels.manifestPath(), "the label set has no frames");
  s.precision = detail::resolveTrainingPrecision(s.settings.precision, s.model.device());
  logger().info("training steps in {}", s.precision == TrainingPrecision::BFloat16
                                            ? "bf16 mixed precision (float32 weights)"
                                            : "float32");
  s.classes = s.labels.classes.empty() ? defaultClasses(task) : s.labels.classes;
  bool headReset = false;
  if (task == Task::Seg || task == Task::Pose) {
    s.classCount = static_cast<std::int64_t>(labelCount(s.labels));
    HeadArch head = s.model.architecture().head;
    if (s.settings.freshHead || head.outChannels != s.classCount) {
      logger().info("Fine-tuning a fresh {} head with {} outputs (the checkpoint's has {})", taskName(task),
                    s.classCount, head.outChannels);
      head.outChannels = static_cast<int>(s.classCount);
      s.model.resetHead(head, s.settings.seed);
      headReset = true;
    }
  } else if (s.settings.freshHead) {
    s.model.resetHead(s.model.architecture().head, s.settings.seed);
    headReset = true;
  }
  s.keepsStartingHead = s.settings.keepUntaught && !headReset;
  if (task == Task::Seg) {
    std::vector<double> weights(static_cast<std::size_t>(s.classCount), 1.0);
    if (detail::isSeg29(s.labels.classes)) weights = detail::seg29ClassWeights();
    for (std::size_t i = 0; i < s.classes.size(); ++i) {
      if (s.classes[i].weight) weights[i] = *s.classes[i].weight;
    }
    s.classWeights = at::tensor(weights, at::kDouble).to(s.model.device(), s.model.dtype());
  }
  s.flip = detail::flipTablesFor(task, s.labels.classes,
                                 static_cast<std::size_t>(std::max<std::int64_t>(s.classCount, 0)));

  s.chooseTrainedTensors();  // every head tensor until prepare() knows what the frames label
}

FineTuner::~FineTuner() = default;

bool FineTuner::prepare(const TrainingControl& control, const PreparationCallback& onFeatures,
                        const RateTrialCallback& onRateTrial) {
  State& s = *state_;
  const std::size_t frameCount = s.labels.frames.size();
  // Split: explicit frames as labelled; a seeded shuffle of the "auto" ones gives the validation share,
  // keeping at least one training frame.
  std::vector<bool> validation(frameCount, false);
  std::vector<std::size_t> automatic;
  for (std::size_t i = 0; i < frameCount; ++i) {
    if (s.labels.frames[i].split == FrameSplit::Validation) validation[i] = true;
    if (s.labels.frames[i].split == FrameSplit::Auto) automatic.push_back(i);
  }
  std::mt19937_64 splitGenerator(s.settings.seed);
  std::shuffle(automatic.begin(), automatic.end(), splitGenerator);
  const std::size_t explicitTrain = static_cast<std::size_t>(
      std::count_if(s.labels.frames.begin(), s.labels.frames.end(),
                    [](const LabelledFrame& f) { return f.split == FrameSplit::Train; }));
  auto wanted = static_cast<std::size_t>(std::lround(s.settings.validationFraction * automatic.size()));
  if (explicitTrain == 0 && wanted >= automatic.size()) wanted = automatic.empty() ? 0 : automatic.size() - 1;
  for (std::size_t i = 0; i < wanted; ++i) validation[automatic[i]] = true;

  s.backboneFingerprint = FeatureCache::backboneFingerprint(s.model);
  std::vector<detail::BuiltSample> built;
  for (std::size_t i = 0; i < frameCount; ++i) {
    const FrameLabels frame = readFrameLabels(s.labels, i);
    for (detail::BuiltSample& sample :
         detail::buildSamples(s.labels, i, frame, s.settings, s.flip, validation[i]))
      built.push_back(std::move(sample));
  }
  s.infos.clear(), s.targets.clear(), s.keys.clear();
  s.trainSamples.clear(), s.trainEvalSamples.clear(), s.validationSamples.clear();
  std::size_t computed = 0;
  for (std::size_t i = 0; i < built.size(); ++i) {
    if (control.stopRequested()) return false;
    const at::Tensor input = normalizeImage(built[i].input);
    const std::string key = FeatureCache::key(s.backboneFingerprint, input);
    if (!s.cache->find(key)) {
      s.cache->insert(key, s.model.backboneFeatures(input));
      ++computed;
    }
    const SampleInfo& info = built[i].info;
    (info.validation ? s.validationSamples : s.trainSamples).push_back(i);
    if (!info.validation && info.variant == 0) s.trainEvalSamples.push_back(i);
    s.infos.push_back(info);
    s.targets.push_back(std::move(built[i].targets));
    s.keys.push_back(key);
    if (onFeatures) onFeatures(i + 1, built.size());
  }
  if (s.keepsStartingHead) {
    // The starting head's predictions, made once from the cached features, become the targets of what
    // the labels leave out.
    for (std::size_t i = 0; i < s.infos.size(); ++i) {
      if (control.stopRequested()) return false;
      detail::addStartingHeadTargets(s.model.task(), s.model.forwardHead(s.features({i})),
                                     s.settings.keepStartingHeadWeight, s.targets[i]);
    }
    logger().info("Keeping the starting head's predictions where nothing is labelled (weight {})",
                  s.settings.keepStartingHeadWeight);
  }
  s.chooseTrainedTensors();
  s.cacheStartingOutputs();
  if (s.trainSamples.empty()) {
    throw LabelSetError(s.labels.manifestPath(),
                        "no training samples: every frame is in the validation split or has "
                        "no usable label");
  }
  logger().info(
      "Fine-tuning {} on {}: {} training samples ({} frames), {} validation samples; backbone ran for {} "
      "(the rest from the feature cache)",
      taskName(s.model.task()), s.labels.folder, s.trainSamples.size(), s.trainEvalSamples.size(),
      s.validationSamples.size(), computed);
  s.prepared = true;
  s.trainingBefore = s.trainingLast = s.evaluate(s.trainEvalSamples);
  if (!s.validationSamples.empty()) s.validationBefore = s.validationLast = s.evaluate(s.validationSamples);
  if (s.settings.learningRate <= 0) {
    double rate = s.chooseLearningRate(control, onRateTrial);
    if (control.stopRequested()) return false;
    if (rate <= 0) {
      logger().warn("the learning-rate range test gave no finite loss; training at {:.0e}", kFallbackRate);
      rate = kFallbackRate;
    }
    s.settings.learningRate = rate;
    logger().info("learning rate {:.0e}, chosen by a range test ({})", rate,
                  describeLearningRateTrials(s.rateTrials));
  }
  return true;
}

TrainingReport FineTuner::train(const TrainingControl& control, const ProgressCallback& onProgress,
                                int reportEvery) {
  State& s = *state_;
  if (!s.prepared) throw ModelRunError("FineTuner::train called before prepare()");
  TrainingReport report;
  const auto start = Clock::now();
  const int startStep = s.step;
  double lossSum = 0;
  int lossSteps = 0;
  double recentLoss = std::numeric_limits<double>::quiet_NaN();
  std::vector<at::Tensor> lastGoodHead;  // the head before the last step, whose loss was finite
  std::string lastSnapshot;              // written by this call, of the head after the last step
  while (s.step < s.settings.steps) {
    if (!control.waitWhilePaused()) {
      report.stopped = true;
      break;
    }
    const auto stepStart = Clock::now();
    const double learningRate = learningRateAt(s.settings, s.step);
    // The head this step starts from, while its loss is not yet known to be finite.
    std::vector<at::Tensor> startingHead;
    for (const at::Tensor& p : s.headTensors) startingHead.push_back(p.detach().clone());
    const State::StepResult result = s.trainStep(*s.optimizer, s.nextBatch(), learningRate);
    if (!result.divergence.empty()) s.stopDiverged(result, lastGoodHead, lastSnapshot);
    lastGoodHead = std::move(startingHead);
    const double lossValue = result.loss;
    lastSnapshot.clear();
    if (std::isnan(s.firstLoss)) s.firstLoss = lossValue;
    ++s.step;
    lossSum += lossValue;
    ++lossSteps;
    s.secondsTraining += std::chrono::duration<double>(Clock::now() - stepStart).count();

    TrainingProgress progress;
    progress.step = s.step;
    progress.totalSteps = s.settings.steps;
    progress.learningRate = learningRate;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    progress.stepsPerSecond = (s.step - startStep) / std::max(elapsed, 1e-9);
    progress.secondsLeft = (s.settings.steps - s.step) / std::max(progress.stepsPerSecond, 1e-9);
    const bool last = s.step == s.settings.steps;
    if ((s.settings.evaluateEvery > 0 && s.step % s.settings.evaluateEvery == 0) || last) {
      s.trainingLast = s.evaluate(s.trainEvalSamples);
      if (!s.validationSamples.empty()) s.validationLast = s.evaluate(s.validationSamples);
      progress.validation = s.validationLast ? *s.validationLast : s.trainingLast;
    }
    if (s.settings.snapshotEvery > 0 && s.step % s.settings.snapshotEvery == 0) {
      const std::string folder =
          s.settings.snapshotFolder.empty() ? std::string(".") : s.settings.snapshotFolder;
      fs::create_directories(folder);
      progress.snapshot =
          (fs::path(folder) / fmt::format("snapshot-step-{:06d}.safetensors", s.step)).string();
      save(progress.snapshot, s.settings.snapshotFullModel);
      lastSnapshot = progress.snapshot;
    }
    if (reportEvery <= 0 || s.step % reportEvery == 0 || progress.validation || !progress.snapshot.empty() ||
        last) {
      progress.trainLoss = lossSum / lossSteps;
      recentLoss = progress.trainLoss;
      lossSum = 0;
      lossSteps = 0;
      if (onProgress) onProgress(progress);
    }
  }
  if (lossSteps > 0) recentLoss = lossSum / lossSteps;
  report.steps = s.step;
  report.firstLoss = s.firstLoss;
  report.lastLoss = recentLoss;
  report.trainingBefore = s.trainingBefore;
  report.validationBefore = s.validationBefore;
  report.trainingAfter = s.trainingLast = s.evaluate(s.trainEvalSamples);
  if (!s.validationSamples.empty())
    report.validationAfter = s.validationLast = s.evaluate(s.validationSamples);
  report.secondsTraining = s.secondsTraining;
  return report;
}

Evaluation FineTuner::evaluate(bool validation) const {
  return state_->evaluate(validation ? state_->validationSamples : state_->trainEvalSamples);
}

MetricInfo FineTuner::metric() const {
  switch (state_->model.task()) {
    case Task::Seg:
      return {"mIoU", true, "the labelled classes"};
    case Task::Pose:
      return {"PCK@0.05", true, "the placed keypoints"};
    case Task::Normal:
      return {"mean angular error (deg)", false};
    case Task::Albedo:
      return {"mean absolute error", false};
    case Task::Pointmap:
      return {"depth AbsRel", false};
    case Task::Matting:
      return {"alpha MAE", false};
    case Task::Backbone:
      break;
  }
  return {"", true};
}

const std::vector<SampleInfo>& FineTuner::samples() const {
  return state_->infos;
}

cv::Mat FineTuner::sampleImage(std::size_t index) const {
  const State& s = *state_;
  const SampleInfo& info = s.infos.at(index);
  const FrameLabels frame = readFrameLabels(s.labels, info.frame);
  for (const detail::BuiltSample& sample :
       detail::buildSamples(s.labels, info.frame, frame, s.settings, s.flip, info.validation)) {
    if (sample.info.person == info.person && sample.info.variant == info.variant) return sample.input;
  }
  throw LabelSetError(s.labels.resolve(s.labels.frames[info.frame].image),
                      "changed since training was prepared");
}

at::Tensor FineTuner::sampleInput(std::size_t index) const {
  return normalizeImage(sampleImage(index));
}

ModelOutputs FineTuner::predict(std::size_t index) const {
  // The model's own head (the two-branch one too), so that a prediction is what the saved model gives.
  state_->updateModelHead();
  return state_->model.forwardHead(state_->features({index}));
}

TrainingPrecision FineTuner::precision() const {
  return state_->precision;
}

const Model& FineTuner::model() const {
  state_->updateModelHead();
  return state_->model;
}

const LabelSet& FineTuner::labels() const {
  return state_->labels;
}

const TrainingSettings& FineTuner::settings() const {
  return state_->settings;
}

std::unique_ptr<FineTuner> FineTuner::fromCheckpoint(const std::string& checkpoint, LabelSet labels,
                                                     TrainingSettings settings,
                                                     std::shared_ptr<FeatureCache> cache,
                                                     const std::string& device) {
  Model model = loadModelForFineTuning(checkpoint, labels.task, device);
  return std::make_unique<FineTuner>(std::move(model), std::move(labels), std::move(settings),
                                     std::move(cache));
}

Model loadModelForFineTuning(const std::string& path, Task task, const std::string& device) {
  ModelOptions options;
  options.device = device;
  options.dtype = at::kFloat;
  options.expectedTask = task;
  return Model::load(path, options);
}

std::string describeLearningRateTrials(const std::vector<LearningRateTrial>& trials) {
  std::vector<std::string> parts;
  for (const LearningRateTrial& t : trials)
    parts.push_back(fmt::format("{:.0e}: loss {:.4f}", t.rate, t.loss));
  return fmt::format("{}", fmt::join(parts, ", "));
}

const std::vector<LearningRateTrial>& FineTuner::learningRateTrials() const {
  return state_->rateTrials;
}

int FineTuner::step() const {
  return state_->step;
}

std::vector<LabelClass> FineTuner::classes() const {
  return state_->classes;
}

void FineTuner::save(const std::string& path, bool fullModel) const {
  state_->updateModelHead();
  const State& s = *state_;
  nlohmann::json classes = nlohmann::json::array();
  for (const LabelClass& c : s.classes)
    classes.push_back({{"name", c.name}, {"color", {c.color[0], c.color[1], c.color[2]}}});
  nlohmann::json metrics{{"metric", metric().name},
                         {"higher_is_better", metric().higherIsBetter},
                         {"training", evaluationJson(s.trainingLast)},
                         {"training_before", evaluationJson(s.trainingBefore)}};
  if (s.validationLast) metrics["validation"] = evaluationJson(*s.validationLast);
  if (s.validationBefore) metrics["validation_before"] = evaluationJson(*s.validationBefore);
  std::map<std::string, std::string> metadata{{"classes", classes.dump()},
                                              {"base_checkpoint", s.baseCheckpoint},
                                              {"label_set", s.labels.folder},
                                              {"step", std::to_string(s.step)},
                                              {"settings", settingsJson(s.settings).dump()},
                                              {"metrics", metrics.dump()}};
  saveFinetunedModel(path, s.model, fullModel, std::move(metadata));
}

}  // namespace sapiens
