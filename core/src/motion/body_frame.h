#pragma once
// Body-fixed axes per row (see joint_angle_table.h): the trunk frame and the world (heading) frame, both
// with left from the hip line, so that angles measured in them keep their sign whichever way the person
// faces. NaN axes where their points are missing.

#include "motion/vector3.h"

namespace sapiens::motion {

struct BodyFrame {
  Point3 forward = vec::missing();
  Point3 up = vec::missing();
  Point3 left = vec::missing();
};

/// left = right_hip -> left_hip; up = pelvis -> thorax made perpendicular to left; forward = left x up.
inline BodyFrame trunkFrame(const Point3& leftHip, const Point3& rightHip, const Point3& pelvis,
                            const Point3& thorax) {
  BodyFrame f;
  f.left = vec::unit(vec::sub(leftHip, rightHip));
  f.up = vec::unitPerpendicular(vec::sub(thorax, pelvis), f.left);
  f.forward = vec::cross(f.left, f.up);
  return f;
}

/// up = `worldUp`; left = the hip line made perpendicular to it; forward = left x up.
inline BodyFrame worldFrame(const Point3& leftHip, const Point3& rightHip, const Point3& worldUp) {
  BodyFrame f;
  f.up = vec::unit(worldUp);
  f.left = vec::unitPerpendicular(vec::sub(leftHip, rightHip), f.up);
  f.forward = vec::cross(f.left, f.up);
  return f;
}

}  // namespace sapiens::motion
