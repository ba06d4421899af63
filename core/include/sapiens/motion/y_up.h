#pragma once
// The one place where the motion files' axes are chosen. The tables hold points in the pointmap's camera
// frame (OpenCV: x right, y down, z forward, metres); TRC, BVH and the 3-D CSV want Y up. A rotation of
// 180 degrees about X, (x, y, z) -> (x, -y, -z), turns y down into Y up and keeps the frame right-handed
// (a mirror would swap the person's left and right). A person facing the camera then faces +Z, their left
// on +X: the BVH convention. Every writer converts through toYUp and nowhere else.

#include "sapiens/motion/motion_tables.h"

namespace sapiens::motion {

inline Point3 toYUp(const Point3& cameraPoint) {
  return {cameraPoint[0], -cameraPoint[1], -cameraPoint[2]};
}

}  // namespace sapiens::motion
