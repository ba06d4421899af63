#pragma once
// Over-fitting as the fine-tuning panel warns of it: the validation loss has stayed above its best value
// for at least a tenth of the run's steps, max(1, totalSteps / 10), counted in steps (evaluations come
// every evaluateEvery steps, so the count runs from the last evaluation that was not above the best).
// "Above" means by more than a relative margin (1% by default), so that a loss flat at its best does not
// warn. Plain values, one thread: feed it the validation evaluations in step order.

#include <optional>

namespace sapiens {

class OverfittingMonitor {
 public:
  static constexpr double kDefaultMargin = 0.01;

  explicit OverfittingMonitor(int totalSteps = 0, double margin = kDefaultMargin);

  /// Forgets every evaluation: a new run of `totalSteps` steps.
  void reset(int totalSteps);
  /// The validation loss after `step` steps (steps at or before the latest one, and non-finite losses,
  /// are ignored).
  void addEvaluation(int step, double loss);

  /// The latest evaluation is above the best one and has been so for at least patienceSteps() steps.
  bool overfitting() const;
  /// overfitting() was true after some evaluation since the last reset.
  bool hasOverfitted() const { return hasOverfitted_; }
  /// max(1, totalSteps / 10).
  int patienceSteps() const;
  /// Steps since the last evaluation that was not above the best one (0 when the latest is not above).
  int stepsAboveBest() const;

  /// The lowest loss so far and its step (the latest of equal ones); nullopt before any evaluation.
  std::optional<int> bestStep() const { return bestStep_; }
  double bestLoss() const { return bestLoss_; }
  std::optional<int> latestStep() const { return latestStep_; }
  double latestLoss() const { return latestLoss_; }

 private:
  bool above(double loss) const;

  int totalSteps_ = 0;
  double margin_ = kDefaultMargin;
  std::optional<int> bestStep_, latestStep_;
  double bestLoss_ = 0, latestLoss_ = 0;
  int lastNotAboveStep_ = 0;  // the step of the latest evaluation that was not above the best
  bool hasOverfitted_ = false;
};

}  // namespace sapiens
