#include "sapiens/result/frame_result.h"

#include <fmt/format.h>

namespace sapiens {

std::string taskErrorsText(const std::map<Task, std::string>& taskErrors) {
  std::string text;
  for (const auto& [task, error] : taskErrors)
    text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", taskName(task), error);
  return text;
}

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
    case Task::Matting:
      return !alpha.empty();
  }
  return false;
}

std::size_t FrameResult::bytes() const {
  std::size_t total = 0;
  for (const cv::Mat* map : {&segLabels, &normal, &albedo, &pointmap, &alpha, &foreground})
    total += map->total() * map->elemSize();
  for (const PoseInstance& pose : poses)
    total += sizeof(PoseInstance) + pose.keypoints.size() * sizeof(pose.keypoints[0]) +
             pose.scores.size() * sizeof(float) + pose.keypoints3d.size() * sizeof(pose.keypoints3d[0]);
  return total;
}

}  // namespace sapiens
