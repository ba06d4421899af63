#pragma once
// How a head is fine-tuned. The optimiser follows the official recipes (section 5 of the model notes)
// where they apply to a frozen backbone: AdamW, weight decay 0.1 (none on biases and 1-D tensors), L2
// gradient clipping at 2, linear warm-up from 1e-3 of the rate, then a cosine decay to 0. The rate is not
// theirs: 5e-4 suits the whole network over tens of thousands of steps, while a head alone on a few
// labelled frames needs a larger one, which depends on the head (a released one or a fresh one) and on
// the labels. By default a short range test picks it (FineTuner::prepare).

#include "sapiens/pipeline/input_size.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sapiens {

/// What a head's training steps compute in: Auto is BFloat16 where --dtype auto picks bf16 for inference
/// on the CPU (native bf16), Float32 elsewhere (CUDA included).
enum class TrainingPrecision { Auto, Float32, BFloat16 };

struct TrainingSettings {
  int steps = 500;
  int batchSize = 4;
  double learningRate = 0;  ///< peak rate; 0: chosen by the range test
  double weightDecay = 0.1;
  double gradientClip = 2.0;        ///< max L2 norm of all head gradients; <= 0: none
  int warmupSteps = -1;             ///< -1: min(500, steps / 10)
  double validationFraction = 0.2;  ///< of the frames whose split is "auto"
  InputSize inputSize;              ///< the network input (1024 x 768 for the released models)
  std::uint64_t seed = 0;

  /// BFloat16: bf16 mixed precision (the convolutions in bf16 on the CPU's native bf16; float32 master
  /// weights, loss and optimiser); Float32; Auto. Evaluations and the backbone's features are float32.
  TrainingPrecision precision = TrainingPrecision::Auto;

  /// Precomputed augmentation variants: each costs one backbone pass per sample, once. The flip mirrors
  /// picture and labels with the left/right swaps; colour variants apply a random photometric distortion
  /// (brightness +-32, contrast x[0.5, 1.5]) to the picture before its features are computed.
  bool horizontalFlip = true;
  int colorVariants = 0;

  /// A fresh head (official initialisation) instead of the checkpoint's; forced when the label set's
  /// class or keypoint count differs from the checkpoint's.
  bool freshHead = false;

  /// Keeps what the frames do not teach when the checkpoint's own head trains (a fresh head has nothing
  /// to keep). Seg and pose, when some class / keypoint is labelled on no training frame: the head is
  /// widened to the starting head, untouched, feeding those outputs, beside a copy of it that feeds the
  /// labelled ones and alone trains (finetune/taught_branch.h), so the outputs nobody labelled predict
  /// as before. Where a frame leaves a taught output unlabelled (unpainted pixels, a keypoint placed on
  /// other frames only) the starting head's prediction is its target, at keepStartingHeadWeight relative
  /// to a label (seg: its label in the cross-entropy, not next to the paint; pose: its heatmap in the MSE
  /// and the KL divergence of its softmax). When every output is labelled somewhere, or seg masks leave
  /// (almost) no pixel unpainted, the whole head trains. Dense tasks: the whole head trains, with an L1
  /// term towards the starting head's maps at the pixels without a target. Off: the whole head trains on
  /// the labels alone.
  bool keepUntaught = true;
  double keepStartingHeadWeight = 1.0;

  int evaluateEvery = 25;  ///< steps between validation passes reported through the progress callback
  int snapshotEvery = 0;   ///< steps between snapshots; 0: none
  std::string snapshotFolder;
  bool snapshotFullModel = false;  ///< snapshots hold the head alone unless set

  std::size_t featureCacheBytes = std::size_t(2) << 30;  ///< in memory; more spills to featureCacheFolder
  std::string featureCacheFolder;                        ///< "": a temporary folder
};

/// "auto", "fp32"/"float32", "bf16"/"bfloat16"; std::nullopt for anything else.
std::optional<TrainingPrecision> parseTrainingPrecision(std::string_view spelling);
/// "auto", "fp32", "bf16".
std::string_view trainingPrecisionName(TrainingPrecision precision);

/// min(500, steps / 10) when warmupSteps is -1.
int effectiveWarmupSteps(const TrainingSettings& settings);
/// Linear warm-up from 1e-3 x the rate to the rate over the warm-up steps, then cosine to 0 at `steps`.
/// `step` counts from 0.
double learningRateAt(const TrainingSettings& settings, int step);

}  // namespace sapiens
