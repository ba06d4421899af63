#include "output_check.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace sapiens {

OutputCheck& OutputCheck::operator+=(const OutputCheck& other) {
  nonFiniteValues += other.nonFiniteValues;
  values += other.values;
  invalidPixels += other.invalidPixels;
  pixels += other.pixels;
  return *this;
}

OutputCheck checkOutput(const at::Tensor& output) {
  const at::Tensor map = output.dim() == 4 ? output.squeeze(0) : output;
  OutputCheck check;
  check.values = map.numel();
  check.pixels = map.dim() == 3 ? map.size(1) * map.size(2) : map.numel();
  const at::Tensor bad = at::isfinite(map).logical_not();
  check.nonFiniteValues = bad.sum().item<std::int64_t>();
  if (check.nonFiniteValues == 0) return check;
  check.invalidPixels = map.dim() == 3 ? bad.any(0).sum().item<std::int64_t>() : check.nonFiniteValues;
  return check;
}

bool acceptOutput(FrameResult& frame, Task task, const OutputCheck& check) {
  if (check.nonFiniteValues == 0) return true;
  frame.nonFiniteValues[task] += check.nonFiniteValues;
  if (check.invalidPixels >= check.pixels) {
    frame.taskErrors[task] = fmt::format(
        "the {} model's output is NaN or infinite at every pixel ({} of {} values): its weights or the "
        "picture make the network overflow, so there is no {} result",
        taskName(task), check.nonFiniteValues, check.values, taskName(task));
    return false;
  }
  frame.warnings[task] = fmt::format(
      "the {} model's output has {} NaN or infinite values (of {}) at {} of {} pixels ({:.2g} %); those "
      "pixels are left invalid",
      taskName(task), check.nonFiniteValues, check.values, check.invalidPixels, check.pixels,
      100.0 * static_cast<double>(check.invalidPixels) / static_cast<double>(check.pixels));
  return true;
}

}  // namespace sapiens
