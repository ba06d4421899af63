#pragma once
// Which lifted keypoints count: the one rule that the pose JSON, the OpenPose export, the 3-D dock's
// skeletons and motion analysis apply to PoseInstance::keypoints3d.

#include "sapiens/result/frame_result.h"

#include <cmath>
#include <cstddef>

namespace sapiens {

/// Keypoint `k` of `pose` has a 3-D point that counts: its score is at or above `threshold` (as for
/// drawing and writing the 2-D keypoint) and the point is finite.
inline bool liftedKeypointCounts(const PoseInstance& pose, std::size_t k, float threshold) {
  if (k >= pose.keypoints3d.size() || k >= pose.scores.size() || !(pose.scores[k] >= threshold)) return false;
  const auto& p = pose.keypoints3d[k];
  return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]);
}

}  // namespace sapiens
