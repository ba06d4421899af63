#pragma once
// Fine-tuning a task head on a label set with the backbone frozen. The backbone runs once per training
// sample (and per precomputed augmentation variant); its features are cached, so a training step costs
// the head's forward and backward pass only.
//
// Augmentation: what changes the picture changes the features, so it is precomputed as variants (the
// horizontal flip, colour variants; see TrainingSettings). Scale/shift jitter and per-step colour jitter
// would need the backbone at every step and are not applied.
//
// Use from one worker thread: prepare(), then train() (again after a stop, to continue); control and
// progress are the only cross-thread parts.

#include "sapiens/finetune/feature_cache.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/finetune/training_control.h"
#include "sapiens/finetune/training_progress.h"
#include "sapiens/finetune/training_settings.h"
#include "sapiens/model/model_error.h"
#include "sapiens/model/task.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace at {
class Tensor;
}

namespace sapiens {

class Model;
class ModelOutputs;

/// One network input made from a frame: the whole picture (seg, dense tasks) or one person's crop (pose).
struct SampleInfo {
  std::size_t frame = 0;
  std::size_t person = 0;  ///< pose
  int variant = 0;         ///< 0: as labelled; 1: flipped; more: colour variants (flipped when odd)
  bool validation = false;
};

/// Training stopped because a step's loss, gradients or update were NaN or infinite. That step was not
/// applied, and the head is the last one whose loss was finite: as it was after keptStep() steps (one
/// fewer than before the failing step when the head it started from already gave a non-finite loss).
class TrainingDivergedError : public ModelRunError {
 public:
  TrainingDivergedError(int step, int keptStep, const std::string& message)
      : ModelRunError(message), step_(step), keptStep_(keptStep) {}
  /// The step that failed (1-based).
  int step() const { return step_; }
  int keptStep() const { return keptStep_; }

 private:
  int step_;
  int keptStep_;
};

class FineTuner {
 public:
  /// `model`: the checkpoint to start from, fp32 (its head is trained in place; a fresh one when the
  /// class or keypoint count differs or settings.freshHead). Throws ModelRunError / LabelSetError for a
  /// model of another task or an empty label set.
  FineTuner(Model model, LabelSet labels, TrainingSettings settings,
            std::shared_ptr<FeatureCache> cache = nullptr);
  /// The same from a checkpoint file (loadModelForFineTuning for the label set's task on `device`): what a
  /// front end that holds no Model calls.
  static std::unique_ptr<FineTuner> fromCheckpoint(const std::string& checkpoint, LabelSet labels,
                                                   TrainingSettings settings,
                                                   std::shared_ptr<FeatureCache> cache = nullptr,
                                                   const std::string& device = "cpu");
  ~FineTuner();
  FineTuner(const FineTuner&) = delete;
  FineTuner& operator=(const FineTuner&) = delete;

  /// Reads and checks every frame (LabelSetError naming the file), splits train/validation and computes
  /// or finds the backbone features of every sample; when settings.learningRate is 0, chooses it by a
  /// short range test on those features (a few steps per candidate rate from the same head, which is then
  /// restored). Returns false when stopped.
  bool prepare(const TrainingControl& control, const PreparationCallback& onFeatures = {},
               const RateTrialCallback& onRateTrial = {});

  /// Trains until settings().steps steps are done in all or `control` stops it; pauses when asked.
  /// Throws TrainingDivergedError when a step would make the loss or the head non-finite.
  /// Progress is reported every `reportEvery` steps and on evaluation and snapshot steps.
  TrainingReport train(const TrainingControl& control, const ProgressCallback& onProgress = {},
                       int reportEvery = 1);

  /// Loss and metric over the unaugmented training or validation samples.
  Evaluation evaluate(bool validation) const;
  MetricInfo metric() const;

  const std::vector<SampleInfo>& samples() const;
  /// The network input of sample `index` (1, 3, H, W), rebuilt from its frame.
  at::Tensor sampleInput(std::size_t index) const;
  /// The network input picture of sample `index` (CV_8UC3 BGR, the input size), rebuilt from its frame.
  cv::Mat sampleImage(std::size_t index) const;
  /// The head's outputs on sample `index`'s cached features (inference mode).
  ModelOutputs predict(std::size_t index) const;
  /// predict(index) post-processed as inference does, in sampleImage(index)'s pixel grid: seg labels, the
  /// pose keypoints of the sample's crop (one person, the whole input as its box), unit normals, albedo
  /// or the metric pointmap. Throws ModelRunError for outputs of another shape.
  FrameResult predictFrame(std::size_t index) const;

  /// What the training steps run in: BFloat16 (mixed precision) or Float32 (TrainingSettings::precision
  /// resolved for the model's device).
  TrainingPrecision precision() const;
  const Model& model() const;
  const LabelSet& labels() const;
  /// The settings in use; a learning rate left to the range test holds the rate it chose once prepared.
  const TrainingSettings& settings() const;
  /// The range test's trials (empty when the rate was given).
  const std::vector<LearningRateTrial>& learningRateTrials() const;
  int step() const;
  /// The classes or keypoint names of the trained head (the label set's, or the released model's).
  std::vector<LabelClass> classes() const;

  /// Writes the trained model (full, or the head alone) with the fine-tuning metadata; atomic.
  void save(const std::string& path, bool fullModel) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The checkpoint a fine-tuning run starts from, as FineTuner needs it: float32 weights on every device
/// (training keeps float32 master weights), refused when it is not a `task` model.
Model loadModelForFineTuning(const std::string& path, Task task, const std::string& device = "cpu");

/// "3e-04: loss 8.2116, 1e-03: loss 7.8747, ..." for logs and reports.
std::string describeLearningRateTrials(const std::vector<LearningRateTrial>& trials);

}  // namespace sapiens
