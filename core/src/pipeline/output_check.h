#pragma once
// NaN and infinite values in a model's raw output. Weights that are finite but huge (a corrupted or
// badly trained checkpoint) or an extreme picture make the forward overflow; the post-processing would
// then turn those pixels into "no value" silently. Counted per picture so that a run says so.

#include "sapiens/model/task.h"
#include "sapiens/result/frame_result.h"

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace sapiens {

struct OutputCheck {
  std::int64_t nonFiniteValues = 0;
  std::int64_t values = 0;
  std::int64_t invalidPixels = 0;  ///< output pixels with a NaN or infinite value in any channel
  std::int64_t pixels = 0;

  OutputCheck& operator+=(const OutputCheck& other);
};

/// Checks one picture's raw output, (C, h, w) or (1, C, h, w), on its device.
OutputCheck checkOutput(const at::Tensor& output);

/// Records `check` in `frame` for `task`: a warning when some values were not finite, the task's error
/// when no pixel was. Returns whether the task's map is worth keeping.
bool acceptOutput(FrameResult& frame, Task task, const OutputCheck& check);

}  // namespace sapiens
