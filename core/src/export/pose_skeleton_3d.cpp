#include "sapiens/export/pose_skeleton_3d.h"

#include "sapiens/export/track_colors.h"
#include "sapiens/result/lifted_keypoint.h"

namespace sapiens {

namespace {

void addPerson(const PoseInstance& pose, const std::vector<bool>& present,
               const std::vector<std::array<int, 2>>& links, PoseSkeletons3d& out) {
  const int first = static_cast<int>(out.pointCount());
  const int count = static_cast<int>(present.size());
  std::size_t anchor = 0;
  while (!present[anchor]) ++anchor;
  const Rgb color = trackColor(pose.trackId);
  for (int k = 0; k < count; ++k) {
    const auto& p = pose.keypoints3d[present[k] ? k : anchor];
    for (const double c : p) out.positions.push_back(static_cast<float>(c));
    out.colors.insert(out.colors.end(), color.begin(), color.end());
    if (present[k]) out.joints.push_back(first + k);
  }
  for (const auto& [a, b] : links)
    if (a >= 0 && b >= 0 && a < count && b < count && present[a] && present[b])
      out.bones.push_back({first + a, first + b});
  ++out.people;
}

}  // namespace

PoseSkeletons3d poseSkeletons3d(const std::vector<PoseInstance>& poses, float threshold,
                                const std::vector<std::array<int, 2>>& links) {
  PoseSkeletons3d out;
  for (const PoseInstance& pose : poses) {
    std::vector<bool> present(pose.keypoints3d.size());
    bool any = false;
    for (std::size_t k = 0; k < present.size(); ++k)
      any |= present[k] = liftedKeypointCounts(pose, k, threshold);
    if (any) addPerson(pose, present, links, out);
  }
  return out;
}

}  // namespace sapiens
