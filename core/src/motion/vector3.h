#pragma once
// 3-vector arithmetic on Point3 for the motion code. A missing point is NaN in every coordinate; the
// operations propagate it (a unit vector of a zero or missing vector is missing).

#include "sapiens/motion/motion_tables.h"

#include <cmath>
#include <limits>

namespace sapiens::motion::vec {

inline Point3 missing() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {nan, nan, nan};
}
inline bool finite(const Point3& p) {
  return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]);
}
inline Point3 add(const Point3& a, const Point3& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
inline Point3 sub(const Point3& a, const Point3& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
inline Point3 scale(const Point3& a, double s) {
  return {a[0] * s, a[1] * s, a[2] * s};
}
inline double dot(const Point3& a, const Point3& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
inline Point3 cross(const Point3& a, const Point3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double norm(const Point3& a) {
  return std::sqrt(dot(a, a));
}
inline Point3 unit(const Point3& a) {
  const double n = norm(a);
  return n > 0 ? scale(a, 1.0 / n) : missing();
}
inline Point3 midpoint(const Point3& a, const Point3& b) {
  return scale(add(a, b), 0.5);
}
/// `v` without its component along unit vector `axis`, made unit length.
inline Point3 unitPerpendicular(const Point3& v, const Point3& axis) {
  return unit(sub(v, scale(axis, dot(v, axis))));
}

}  // namespace sapiens::motion::vec
