#include "sapiens/export/pixel_description.h"

#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace sapiens {
namespace {

std::string partAt(const FrameResult& result, int x, int y) {
  const int label = result.segLabels.at<std::uint8_t>(y, x);
  const SegClasses& classes = seg29();
  return std::size_t(label) < classes.size() ? classes.names[std::size_t(label)]
                                             : fmt::format("class {}", label);
}

// Empty when no keypoint of any person reaches the threshold.
std::string nearestKeypoint(const FrameResult& result, int x, int y, double threshold) {
  const KeypointMetadata& metadata = keypoints308();
  double best = std::numeric_limits<double>::infinity();
  std::string nearest;
  for (const PoseInstance& pose : result.poses) {
    for (std::size_t i = 0; i < pose.keypoints.size() && i < pose.scores.size(); ++i) {
      if (!(pose.scores[i] >= threshold)) continue;
      const double d = std::hypot(pose.keypoints[i][0] - (x + 0.5), pose.keypoints[i][1] - (y + 0.5));
      if (d < best) {
        best = d;
        const std::string name = i < metadata.size() ? metadata.names[i] : fmt::format("#{}", i);
        nearest = fmt::format("{} {:.2f}", name, pose.scores[i]);
      }
    }
  }
  return nearest;
}

}  // namespace

std::vector<std::string> describePixel(const FrameResult& result, int x, int y, double keypointThreshold) {
  std::vector<std::string> parts;
  if (x < 0 || y < 0 || x >= result.width || y >= result.height) return parts;
  if (result.has(Task::Seg)) parts.push_back(partAt(result, x, y));
  if (!result.poses.empty()) {
    std::string nearest = nearestKeypoint(result, x, y, keypointThreshold);
    if (!nearest.empty()) parts.push_back(std::move(nearest));
  }
  if (result.has(Task::Pointmap)) {
    const cv::Vec3f point = result.pointmap.at<cv::Vec3f>(y, x);
    parts.push_back(fmt::format("depth {:.2f} m", point[2]));
  }
  if (result.has(Task::Normal)) {
    const cv::Vec3f n = result.normal.at<cv::Vec3f>(y, x);
    parts.push_back(fmt::format("normal {:.2f} {:.2f} {:.2f}", n[0], n[1], n[2]));
  }
  if (result.has(Task::Matting)) parts.push_back(fmt::format("alpha {:.3f}", result.alpha.at<float>(y, x)));
  return parts;
}

}  // namespace sapiens
