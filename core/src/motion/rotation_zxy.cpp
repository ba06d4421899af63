#include "rotation_zxy.h"

#include "vector3.h"

#include <algorithm>
#include <cmath>

namespace sapiens::motion {

namespace {

constexpr double kDegrees = 180.0 / M_PI;

Matrix3 fromColumns(const Point3& a, const Point3& b, const Point3& c) {
  return {{{a[0], b[0], c[0]}, {a[1], b[1], c[1]}, {a[2], b[2], c[2]}}};
}

Point3 normalised(const Point3& v) {
  return vec::unit(v);
}

/// A unit vector perpendicular to unit `u`.
Point3 anyPerpendicular(const Point3& u) {
  const Point3 axis = std::abs(u[0]) < 0.9 ? Point3{1, 0, 0} : Point3{0, 1, 0};
  return vec::unit(vec::cross(u, axis));
}

double nearestTurn(double angle, double previous) {
  return angle + 360.0 * std::round((previous - angle) / 360.0);
}

}  // namespace

Matrix3 multiply(const Matrix3& a, const Matrix3& b) {
  Matrix3 m{};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m[r][c] = a[r][0] * b[0][c] + a[r][1] * b[1][c] + a[r][2] * b[2][c];
  return m;
}

Matrix3 transpose(const Matrix3& m) {
  return {{{m[0][0], m[1][0], m[2][0]}, {m[0][1], m[1][1], m[2][1]}, {m[0][2], m[1][2], m[2][2]}}};
}

Point3 rotate(const Matrix3& m, const Point3& v) {
  return {vec::dot(m[0], v), vec::dot(m[1], v), vec::dot(m[2], v)};
}

Matrix3 rotationOntoAxes(const Point3& primary, const Point3& secondary, const Point3& restPrimary,
                         const Point3& restSecondary) {
  const Point3 u = normalised(primary);
  const Point3 across = vec::sub(secondary, vec::scale(u, vec::dot(secondary, u)));
  const Point3 v = vec::norm(across) > 1e-9 * std::max(1.0, vec::norm(secondary)) ? normalised(across)
                                                                                  : anyPerpendicular(u);
  const Matrix3 target = fromColumns(u, v, vec::cross(u, v));
  const Matrix3 rest = fromColumns(restPrimary, restSecondary, vec::cross(restPrimary, restSecondary));
  return multiply(target, transpose(rest));
}

Matrix3 shortestRotation(const Point3& from, const Point3& to) {
  const Point3 axis = vec::cross(from, to);
  const double s = vec::norm(axis);
  const double c = vec::dot(from, to);
  if (s < 1e-12 && c > 0) return {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  const Point3 k = s < 1e-12 ? anyPerpendicular(from) : vec::scale(axis, 1.0 / s);
  const double angle = std::atan2(s, c);
  // Rodrigues: I + sin K + (1 - cos) K^2
  const double sn = std::sin(angle), t = 1 - std::cos(angle);
  return {{{1 - t * (k[1] * k[1] + k[2] * k[2]), -sn * k[2] + t * k[0] * k[1], sn * k[1] + t * k[0] * k[2]},
           {sn * k[2] + t * k[0] * k[1], 1 - t * (k[0] * k[0] + k[2] * k[2]), -sn * k[0] + t * k[1] * k[2]},
           {-sn * k[1] + t * k[0] * k[2], sn * k[0] + t * k[1] * k[2], 1 - t * (k[0] * k[0] + k[1] * k[1])}}};
}

Matrix3 rotationFromZXY(const Point3& degrees) {
  const double cz = std::cos(degrees[0] / kDegrees), sz = std::sin(degrees[0] / kDegrees);
  const double cx = std::cos(degrees[1] / kDegrees), sx = std::sin(degrees[1] / kDegrees);
  const double cy = std::cos(degrees[2] / kDegrees), sy = std::sin(degrees[2] / kDegrees);
  const Matrix3 z{{{cz, -sz, 0}, {sz, cz, 0}, {0, 0, 1}}};
  const Matrix3 x{{{1, 0, 0}, {0, cx, -sx}, {0, sx, cx}}};
  const Matrix3 y{{{cy, 0, sy}, {0, 1, 0}, {-sy, 0, cy}}};
  return multiply(multiply(z, x), y);
}

Point3 continuousZXY(const Matrix3& m, const Point3& previous) {
  // Rz Rx Ry = [[cz cy - sz sx sy, -sz cx, cz sy + sz sx cy],
  //             [sz cy + cz sx sy,  cz cx, sz sy - cz sx cy],
  //             [-cx sy,            sx,    cx cy]]
  const double x = std::asin(std::clamp(m[2][1], -1.0, 1.0)) * kDegrees;
  double z, y;
  if (std::abs(m[2][1]) < 1 - 1e-12) {
    z = std::atan2(-m[0][1], m[1][1]) * kDegrees;
    y = std::atan2(-m[2][0], m[2][2]) * kDegrees;
  } else {  // gimbal lock: only z + y (or z - y) is defined; keep y where it was
    y = previous[2];
    const double sum = std::atan2(m[1][0], m[0][0]) * kDegrees;  // z + sign(x) * y
    z = m[2][1] > 0 ? sum - y : sum + y;
  }
  const Point3 first{z, x, y};
  const Point3 second{z + 180, 180 - x, y + 180};
  Point3 best{};
  double bestDistance = INFINITY;
  for (const Point3& candidate : {first, second}) {
    Point3 shifted;
    for (int i = 0; i < 3; ++i) shifted[i] = nearestTurn(candidate[i], previous[i]);
    const double distance = vec::norm(vec::sub(shifted, previous));
    if (distance < bestDistance) {
      bestDistance = distance;
      best = shifted;
    }
  }
  return best;
}

}  // namespace sapiens::motion
