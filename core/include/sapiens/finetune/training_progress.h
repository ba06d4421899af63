#pragma once
// What a training loop reports, as plain values (a GUI forwards them through queued signals).

#include <functional>
#include <optional>
#include <string>

namespace sapiens {

/// Loss and task metric over a set of samples.
struct Evaluation {
  double loss = 0;
  double metric = 0;                     ///< over what the labels teach (see MetricInfo)
  std::optional<double> allClassMetric;  ///< seg: mIoU over every class, the untaught ones too
  std::size_t samples = 0;
};

struct TrainingProgress {
  int step = 0;  ///< steps done
  int totalSteps = 0;
  double trainLoss = 0;  ///< mean over the steps since the previous report
  double learningRate = 0;
  double stepsPerSecond = 0;
  double secondsLeft = 0;
  std::optional<Evaluation> validation;  ///< on evaluation steps (validation frames, else the training ones)
  std::string snapshot;                  ///< the file written at this step, if any
};

using ProgressCallback = std::function<void(const TrainingProgress&)>;
/// Feature precomputation: samples done, samples in all.
using PreparationCallback = std::function<void(std::size_t done, std::size_t total)>;

/// The metric of each task: seg mIoU over the classes the evaluated frames label (higher is better; the
/// mIoU over every class predicted or labelled beside it), pose PCK@0.05 of the input diagonal over the
/// keypoints placed (higher), normal mean angular error in degrees (lower), albedo mean absolute error
/// (lower), pointmap absolute relative depth error (lower), matting alpha MAE (lower).
struct MetricInfo {
  std::string name;
  bool higherIsBetter = true;
  std::string scope{};  ///< what it is computed over: "the labelled classes", "the placed keypoints", ""
};

/// "mIoU 0.0100 -> 0.9800 over the labelled classes (all classes 0.0000 -> 0.0731)": the figure before
/// and after, what it is over, and the all-class figure where there is one.
std::string describeMetricChange(const MetricInfo& metric, const Evaluation& before, const Evaluation& after);

/// One candidate of the learning-rate range test: the loss on the training frames after a few steps.
struct LearningRateTrial {
  double rate = 0;
  double loss = 0;
};

/// Range test: candidates tried, candidates in all, the latest trial.
using RateTrialCallback = std::function<void(std::size_t done, std::size_t total, const LearningRateTrial&)>;

struct TrainingReport {
  int steps = 0;  ///< steps done in all (over every train() call)
  bool stopped = false;
  double firstLoss = 0;                      ///< training loss of the first step ever
  double lastLoss = 0;                       ///< mean training loss of the last steps
  Evaluation trainingBefore, trainingAfter;  ///< on the training frames (unaugmented)
  std::optional<Evaluation> validationBefore, validationAfter;
  double secondsTraining = 0;
};

}  // namespace sapiens
