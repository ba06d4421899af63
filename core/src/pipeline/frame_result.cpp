#include "sapiens/pipeline/frame_result.h"

namespace sapiens {

bool FrameResult::has(Task task) const {
  switch (task) {
    case Task::Backbone:
      return false;  // features are not part of a frame's results
    case Task::Pose:
      return !poses.empty();
    case Task::Seg:
      return !segLabels.empty();
    case Task::Normal:
      return !normal.empty();
    case Task::Albedo:
      return !albedo.empty();
    case Task::Pointmap:
      return !pointmap.empty();
  }
  return false;
}

}  // namespace sapiens
