#include "sapiens/motion/derived_points.h"

#include "motion/vector3.h"
#include "sapiens/motion/keypoint_names.h"

namespace sapiens::motion {

namespace {

struct SourceIndices {
  int leftHip = goliathKeypointIndex("left_hip");
  int rightHip = goliathKeypointIndex("right_hip");
  int neck = goliathKeypointIndex("neck");
  int leftShoulder = goliathKeypointIndex("left_shoulder");
  int rightShoulder = goliathKeypointIndex("right_shoulder");
  int leftEar = goliathKeypointIndex("left_ear");
  int rightEar = goliathKeypointIndex("right_ear");
  int glabella = goliathKeypointIndex("center_of_glabella");
};

const SourceIndices& sources() {
  static const SourceIndices indices;
  return indices;
}

// The first of `preferred`, `fallback` that is finite (NaN when neither is).
Point3 firstFinite(const Point3& preferred, const Point3& fallback) {
  return vec::finite(preferred) ? preferred : fallback;
}

}  // namespace

const std::array<std::string, kDerivedPointCount>& derivedPointNames() {
  static const std::array<std::string, kDerivedPointCount> names{"pelvis", "thorax", "spine", "head"};
  return names;
}

std::array<Point3, kDerivedPointCount> derivePoints(const std::vector<Point3>& keypoints) {
  const SourceIndices& s = sources();
  const auto at = [&](int index) {
    return static_cast<std::size_t>(index) < keypoints.size() ? keypoints[static_cast<std::size_t>(index)]
                                                              : vec::missing();
  };
  const Point3 pelvis = vec::midpoint(at(s.leftHip), at(s.rightHip));
  const Point3 thorax = firstFinite(at(s.neck), vec::midpoint(at(s.leftShoulder), at(s.rightShoulder)));
  const Point3 spine = vec::midpoint(pelvis, thorax);
  const Point3 head = firstFinite(vec::midpoint(at(s.leftEar), at(s.rightEar)), at(s.glabella));
  return {pelvis, thorax, spine, head};
}

}  // namespace sapiens::motion
