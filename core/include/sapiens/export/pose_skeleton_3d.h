#pragma once
// The people of a picture as 3-D skeletons to draw over its point cloud: each person's lifted keypoints
// (PoseInstance::keypoints3d) as joints and the keypoint layout's links as bones, in the person's track
// colour. Every person keeps all its keypoints' slots, so that joint k of person p is point p * K + k.

#include "sapiens/result/frame_result.h"

#include <array>
#include <cstdint>
#include <vector>

namespace sapiens {

struct PoseSkeletons3d {
  std::vector<float> positions;           ///< xyz per point, metres in the pointmap's camera frame
  std::vector<std::uint8_t> colors;       ///< rgb per point: the person's track colour
  std::vector<int> joints;                ///< the points to draw: keypoints that count and were lifted
  std::vector<std::array<int, 2>> bones;  ///< pairs of points, both ends among `joints`
  int people = 0;                         ///< persons with at least one joint
  std::size_t pointCount() const { return positions.size() / 3; }
};

/// The skeletons of `poses` whose keypoints score >= `threshold` and have a 3-D point; `links` are the
/// layout's bones (keypoint index pairs). A slot without a joint takes its person's first joint's
/// position (never drawn, but inside the scene's bounds). Persons without any joint are left out.
PoseSkeletons3d poseSkeletons3d(const std::vector<PoseInstance>& poses, float threshold,
                                const std::vector<std::array<int, 2>>& links);

}  // namespace sapiens
