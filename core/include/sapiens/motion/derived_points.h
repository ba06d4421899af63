#pragma once
// Points the Goliath-308 keypoints lack, derived per row: pelvis = mid-hips; thorax = the neck keypoint,
// else mid-shoulders; spine = mid(pelvis, thorax); head = mid-ears, else the glabella. NaN where their
// sources are missing.

#include "sapiens/motion/motion_tables.h"

#include <array>
#include <string>
#include <vector>

namespace sapiens::motion {

inline constexpr std::size_t kDerivedPointCount = 4;

/// "pelvis", "thorax", "spine", "head": the order of derivePoints' result.
const std::array<std::string, kDerivedPointCount>& derivedPointNames();

/// The derived points of one row of Goliath-308 keypoints (as many as goliathKeypointNames()).
std::array<Point3, kDerivedPointCount> derivePoints(const std::vector<Point3>& keypoints);

}  // namespace sapiens::motion
