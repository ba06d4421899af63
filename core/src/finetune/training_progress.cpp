#include "sapiens/finetune/training_progress.h"

#include <fmt/format.h>

namespace sapiens {

std::string describeMetricChange(const MetricInfo& metric, const Evaluation& before,
                                 const Evaluation& after) {
  std::string text = fmt::format("{} {:.4f} -> {:.4f}", metric.name, before.metric, after.metric);
  if (!metric.scope.empty()) text += " over " + metric.scope;
  if (before.allClassMetric && after.allClassMetric)
    text += fmt::format(" (all classes {:.4f} -> {:.4f})", *before.allClassMetric, *after.allClassMetric);
  return text;
}

}  // namespace sapiens
