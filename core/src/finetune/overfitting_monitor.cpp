#include "sapiens/finetune/overfitting_monitor.h"

#include <algorithm>
#include <cmath>

namespace sapiens {

OverfittingMonitor::OverfittingMonitor(int totalSteps, double margin)
    : totalSteps_(totalSteps), margin_(std::max(0.0, margin)) {}

void OverfittingMonitor::reset(int totalSteps) {
  *this = OverfittingMonitor(totalSteps, margin_);
}

int OverfittingMonitor::patienceSteps() const {
  return std::max(1, totalSteps_ / 10);
}

bool OverfittingMonitor::above(double loss) const {
  return bestStep_ && loss > bestLoss_ + margin_ * std::abs(bestLoss_);
}

void OverfittingMonitor::addEvaluation(int step, double loss) {
  if (!std::isfinite(loss) || (latestStep_ && step <= *latestStep_)) return;
  latestStep_ = step;
  latestLoss_ = loss;
  if (!above(loss)) {
    lastNotAboveStep_ = step;
    if (!bestStep_ || loss <= bestLoss_) {
      bestStep_ = step;
      bestLoss_ = loss;
    }
  }
  if (overfitting()) hasOverfitted_ = true;
}

int OverfittingMonitor::stepsAboveBest() const {
  return latestStep_ && above(latestLoss_) ? *latestStep_ - lastNotAboveStep_ : 0;
}

bool OverfittingMonitor::overfitting() const {
  return stepsAboveBest() >= patienceSteps();
}

}  // namespace sapiens
