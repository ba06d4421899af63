#pragma once
// Joint angles as data: resources/data/joint_angles.json defines each angle once (name, points,
// convention, sign, offset, unit, OpenSim coordinate); joint_angles.h evaluates them. Conventions, all
// measured in body-fixed frames so that a sign never depends on which way the person faces:
//   vector_angle         points [a, b, c, d]: the 3-D angle between b - a and d - c, 0..180.
//   signed_vector_angle  the same, negative when (b - a) x (d - c) points against axis [p, q] (q - p).
//   sagittal_angle       points [a, b]: b - a in the body frame's sagittal plane, the angle from the frame's
//                        "down" or "up" towards its forward axis (atan2; flexion positive).
//   frontal_angle        points [a, b]: the angle of b - a out of the sagittal plane, towards the body's
//                        "left" or "right" (asin).
// Frames: "trunk" (left = right_hip -> left_hip, up = pelvis -> thorax made perpendicular to left,
// forward = left x up) and "world" (up = the settings' world up, left = the hip line made horizontal,
// forward = left x up). Every value is offset_deg + sign * the measured angle.

#include <string>
#include <vector>

namespace sapiens::motion {

enum class AngleConvention { VectorAngle, SignedVectorAngle, SagittalAngle, FrontalAngle };
enum class BodyFrameKind { Trunk, World };

struct AngleDefinition {
  std::string name;  // "left_knee.flexion"
  AngleConvention convention = AngleConvention::VectorAngle;
  std::vector<std::string> points;  // keypoint or derived point names
  std::vector<std::string> axis;    // signed_vector_angle: [p, q], the axis q - p
  BodyFrameKind frame = BodyFrameKind::Trunk;
  bool towardsUp = false;    // sagittal_angle: measured from "up" (else from "down")
  bool towardsLeft = false;  // frontal_angle: positive towards the body's left (else its right)
  double sign = 1.0;
  double offsetDegrees = 0.0;
  std::string unit;               // "deg"
  std::string opensimCoordinate;  // "knee_angle_r"; empty where OpenSim has none
  double opensimSign = 1.0;       // the OpenSim coordinate = opensimSign * this angle
  std::string description;
};

/// The "angles" list of a joint angle table. Throws FileReadError (unreadable file) or MotionError naming
/// the file, the entry and the key (an unknown convention, frame or point name, a wrong point count, a
/// repeated name).
std::vector<AngleDefinition> loadAngleTable(const std::string& path);

/// paths::resourceDir() + "/data/joint_angles.json", read on first use (thread-safe).
const std::vector<AngleDefinition>& jointAngleTable();

/// The definitions named in `names`, in that order; all of `table` when `names` is empty. Throws
/// MotionError naming an unknown or repeated angle and listing the valid names.
std::vector<AngleDefinition> selectAngles(const std::vector<AngleDefinition>& table,
                                          const std::vector<std::string>& names);

}  // namespace sapiens::motion
