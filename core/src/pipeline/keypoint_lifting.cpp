#include "sapiens/pipeline/keypoint_lifting.h"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sapiens {

namespace {

constexpr double kRadiusPerBoxSide = 0.015;
constexpr int kMinRadius = 2;
constexpr int kMaxRadius = 16;
constexpr float kMatteIsPerson = 0.5f;

bool isValidSample(const cv::Vec3f& p) {
  return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]) && p[2] > 0.0f;
}

double lowerMedian(std::vector<float>& values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end());
  return *middle;
}

std::array<double, 3> liftOne(const std::array<double, 2>& keypoint, int radius, const cv::Mat& pointmap,
                              const cv::Mat& personMask) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  const double u = keypoint[0], v = keypoint[1];
  if (!std::isfinite(u) || !std::isfinite(v) || u < 0 || v < 0 || u >= pointmap.cols || v >= pointmap.rows)
    return {nan, nan, nan};
  const int cx = static_cast<int>(u), cy = static_cast<int>(v);
  std::array<std::vector<float>, 3> samples;
  for (int y = std::max(0, cy - radius); y <= std::min(pointmap.rows - 1, cy + radius); ++y) {
    const auto* row = pointmap.ptr<cv::Vec3f>(y);
    const auto* mask = personMask.empty() ? nullptr : personMask.ptr<std::uint8_t>(y);
    for (int x = std::max(0, cx - radius); x <= std::min(pointmap.cols - 1, cx + radius); ++x) {
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) > radius * radius) continue;
      if ((mask && mask[x] == 0) || !isValidSample(row[x])) continue;
      for (int c = 0; c < 3; ++c) samples[c].push_back(row[x][c]);
    }
  }
  if (samples[0].empty()) return {nan, nan, nan};
  return {lowerMedian(samples[0]), lowerMedian(samples[1]), lowerMedian(samples[2])};
}

cv::Mat personMaskOf(const FrameResult& frame) {
  if (!frame.segLabels.empty() && frame.segLabels.size() == frame.pointmap.size()) return frame.segLabels;
  if (!frame.alpha.empty() && frame.alpha.size() == frame.pointmap.size())
    return frame.alpha > kMatteIsPerson;
  return {};
}

}  // namespace

int liftingRadius(const BoundingBox& box) {
  const double side = std::max(box.width(), box.height());
  if (!std::isfinite(side)) return kMinRadius;
  return std::clamp(static_cast<int>(std::lround(kRadiusPerBoxSide * side)), kMinRadius, kMaxRadius);
}

std::vector<std::array<double, 3>> liftKeypoints(const PoseInstance& pose, const cv::Mat& pointmap,
                                                 const cv::Mat& personMask) {
  std::vector<std::array<double, 3>> lifted;
  if (pointmap.empty() || pointmap.type() != CV_32FC3) return lifted;
  const cv::Mat mask =
      personMask.size() == pointmap.size() && personMask.type() == CV_8UC1 ? personMask : cv::Mat();
  const int radius = liftingRadius(pose.bbox);
  lifted.reserve(pose.keypoints.size());
  for (const auto& keypoint : pose.keypoints) lifted.push_back(liftOne(keypoint, radius, pointmap, mask));
  return lifted;
}

void liftFrameKeypoints(FrameResult& frame) {
  const cv::Mat mask = frame.pointmap.empty() ? cv::Mat() : personMaskOf(frame);
  for (PoseInstance& pose : frame.poses) pose.keypoints3d = liftKeypoints(pose, frame.pointmap, mask);
}

}  // namespace sapiens
