#pragma once
// Rotation matrices and BVH's Euler angles: channels `Zrotation Xrotation Yrotation` mean the intrinsic
// sequence Z, then X, then Y, i.e. R = Rz(z) * Rx(x) * Ry(y) acting on column vectors (scipy's
// Rotation.from_euler('ZXY', [z, x, y], degrees=True)).

#include "sapiens/motion/motion_tables.h"

#include <array>

namespace sapiens::motion {

/// Row-major 3x3; columns are the rotated frame's axes in the parent frame.
using Matrix3 = std::array<Point3, 3>;

Matrix3 multiply(const Matrix3& a, const Matrix3& b);
Matrix3 transpose(const Matrix3& m);
Point3 rotate(const Matrix3& m, const Point3& v);

/// The rotation taking the orthonormal pair (restPrimary, restSecondary) onto (primary, secondary with its
/// component along primary removed). primary and secondary need not be unit length; restPrimary and
/// restSecondary must be orthonormal. A secondary (nearly) parallel to primary falls back to any
/// perpendicular.
Matrix3 rotationOntoAxes(const Point3& primary, const Point3& secondary, const Point3& restPrimary,
                         const Point3& restSecondary);

/// The shortest rotation taking unit vector `from` onto unit vector `to` (a half turn about a perpendicular
/// when they are opposite).
Matrix3 shortestRotation(const Point3& from, const Point3& to);

/// Rz(z) * Rx(x) * Ry(y), angles in degrees as {z, x, y}.
Matrix3 rotationFromZXY(const Point3& degrees);

/// The {z, x, y} angles in degrees of `m` that lie nearest to `previous` (each angle may leave +-180 to
/// stay continuous): of the two Euler solutions, each angle shifted by whole turns towards `previous`,
/// the one at the smaller distance.
Point3 continuousZXY(const Matrix3& m, const Point3& previous);

}  // namespace sapiens::motion
