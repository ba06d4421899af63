#pragma once
// STEM.trackN.bvh: the skeleton and motion of sapiens/motion/bvh_skeleton.h as a BVH file.
//   HIERARCHY / ROOT Hips { OFFSET, CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation,
//   JOINT ... { OFFSET, CHANNELS 3 Zrotation Xrotation Yrotation, ... End Site { OFFSET } } }
//   MOTION / Frames: N / Frame Time: T / N lines of every channel's value in hierarchy order.
// Lengths and positions in metres (BVH has no unit field), Y up; rotations in degrees, intrinsic in the
// listed order (Z, then X, then Y); numbers in plain decimal notation (no exponent), the shortest that
// reads back as the same double. One frame per sample of the clip; the frame time is the median sampling
// interval. The file is replaced atomically.

#include "sapiens/motion/bvh_skeleton.h"

#include <string>

namespace sapiens::motion {

std::string bvhText(const BvhMotion& motion);

void writeBvh(const std::string& path, const BvhMotion& motion);

/// buildBvhMotion then writeBvh; its errors become ExportError naming `path` (nothing is written).
void writeBvh(const std::string& path, const MarkerTable& markers);

}  // namespace sapiens::motion
