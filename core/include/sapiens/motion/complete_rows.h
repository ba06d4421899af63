#pragma once
// TRC and MOT files cannot hold a missing value (OpenSim reads an empty field as NaN, and NaN breaks its
// inverse kinematics), so their writers refuse a table with one. A caller either writes one gap-free
// segment of the clip, or keeps only the complete rows with these: the rows left keep their real times,
// so the file's time column still says when each sample was taken (the rate in its header is nominal).

#include "sapiens/motion/motion_tables.h"

namespace sapiens::motion {

/// The rows where every marker has all three coordinates finite.
MarkerTable keepCompleteRows(const MarkerTable& table);
/// The rows where every angle is finite.
AngleTable keepCompleteRows(const AngleTable& table);

}  // namespace sapiens::motion
