#pragma once
// Joint angles over a clip from marker positions, as the angle table defines them (joint_angle_table.h).

#include "sapiens/motion/joint_angle_table.h"
#include "sapiens/motion/motion_tables.h"

#include <vector>

namespace sapiens::motion {

/// One angle per definition for every row of `markers` (degrees; NaN where a point it needs is missing),
/// each series unwrapped (unwrapDegrees). `markers` names the Goliath keypoints and derived points it
/// holds; a point it lacks leaves the angle NaN. `worldUp` is the up direction in the markers' frame (the
/// camera's -y for a level camera).
AngleTable computeAngles(const MarkerTable& markers, const std::vector<AngleDefinition>& definitions,
                         const Point3& worldUp);

/// Makes `degrees` continuous: each finite value moved by a multiple of 360 to lie within 180 of the
/// finite value before it (across NaN gaps too), so that no step jumps at +-180.
void unwrapDegrees(std::vector<double>& degrees);

}  // namespace sapiens::motion
