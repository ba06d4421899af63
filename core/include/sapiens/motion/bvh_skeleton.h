#pragma once
// One track's joints as a BVH skeleton: a fixed hierarchy rooted at the pelvis, constant bone lengths and
// per-frame joint rotations. All lengths in metres, Y up (sapiens/motion/y_up.h), the character facing +Z
// with its left on +X in the rest pose (a T-pose: arms along +-X, legs down -Y, feet forward +Z).
//
//   Hips (pelvis; root: translation every frame)
//   +- Spine (at the pelvis, bone to `spine`) - Chest (at `spine`, bone to `thorax`)
//   |  +- Neck (at `thorax`, bone to `head`) - Head (at `head`, bone to `nose`) - End Site
//   |  +- LeftShoulder (at `thorax`, bone to left_shoulder) - LeftArm - LeftForeArm - End Site (wrist)
//   |  +- RightShoulder ... (the same on the right)
//   +- LeftUpLeg (at left_hip) - LeftLeg (knee) - LeftFoot (ankle) - End Site (left_big_toe)
//   +- RightUpLeg ... (the same on the right)
// Every bone is its own joint's, so forward kinematics puts every joint back on its marker's direction
// with the clip's median bone length. Each joint's rotation turns its rest bone onto the frame's bone and
// a rest second axis onto the frame's second axis: the hip line for the pelvis and the lower spine, the
// shoulder line for the chest, the ear line for the neck and head, the trunk for the clavicles, the shank
// for the foot, and the limb's bend plane (upper x lower segment) for the arms and legs; a limb too
// straight to show its plane takes the twist of the shortest swing from its rest direction instead (blended
// between 5 and 20 degrees of bend). Euler angles are in the channel order Z, X, Y (intrinsic) and continuous
// over time: each frame picks, of the two solutions and their whole-turn shifts, the one nearest the
// previous frame (they may leave +-180).
//
// Frames are the clip's samples, one BVH frame per table row, and the frame time is the median sampling
// interval (BVH has a single frame time; for a variable-rate clip the frames are in sample order, not at
// exact times). A row where a needed marker is missing holds the previous frame's pose (rows before the
// first complete one take that one's pose), so the frames stay in step with the video; heldFrames says
// which.

#include "sapiens/motion/motion_tables.h"

#include <string>
#include <vector>

namespace sapiens::motion {

struct BvhJoint {
  std::string name;
  int parent = -1;          ///< index into BvhMotion::joints; -1 for the root
  Point3 offset{};          ///< from the parent joint in the rest pose (metres)
  bool hasEndSite = false;  ///< the joint ends a chain
  Point3 endSite{};         ///< the chain end's offset from this joint
};

struct BvhMotion {
  std::vector<BvhJoint> joints;                ///< parents before children, depth first: the file's order
  double frameTime = 0;                        ///< seconds
  std::vector<Point3> rootPositions;           ///< [frame], metres, Y up
  std::vector<std::vector<Point3>> rotations;  ///< [frame][joint] = {Z, X, Y} degrees
  std::vector<bool> heldFrames;                ///< [frame]: a marker was missing, the previous pose is held
};

/// The marker names buildBvhMotion reads from its table (Goliath-308 names and the derived pelvis, spine,
/// thorax, head).
const std::vector<std::string>& bvhMarkerNames();

/// The skeleton and its motion from a table of markers in the camera frame (metres). Throws MotionError
/// when a needed marker is not in the table (naming them), when the table has fewer than two rows, rows
/// of the wrong length or times that do not increase, or when no row has every needed marker.
BvhMotion buildBvhMotion(const MarkerTable& markers);

}  // namespace sapiens::motion
