#include "sapiens/motion/joint_angles.h"

#include "motion/body_frame.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace sapiens::motion {

namespace {

constexpr double kDegreesPerRadian = 180.0 / M_PI;

// The marker columns an angle reads, resolved once (-1 where the table lacks the point).
struct Columns {
  std::vector<int> points;
  std::vector<int> axis;
  int leftHip = -1;
  int rightHip = -1;
  int pelvis = -1;
  int thorax = -1;
};

int columnOf(const std::map<std::string, int>& index, const std::string& name) {
  const auto found = index.find(name);
  return found == index.end() ? -1 : found->second;
}

Columns resolve(const AngleDefinition& d, const std::map<std::string, int>& index) {
  Columns c;
  for (const auto& p : d.points) c.points.push_back(columnOf(index, p));
  for (const auto& p : d.axis) c.axis.push_back(columnOf(index, p));
  c.leftHip = columnOf(index, "left_hip");
  c.rightHip = columnOf(index, "right_hip");
  c.pelvis = columnOf(index, "pelvis");
  c.thorax = columnOf(index, "thorax");
  return c;
}

Point3 pointAt(const std::vector<Point3>& row, int column) {
  return column < 0 ? vec::missing() : row[static_cast<std::size_t>(column)];
}

double vectorAngle(const Point3& u, const Point3& v) {
  const Point3 a = vec::unit(u);
  const Point3 b = vec::unit(v);
  return std::atan2(vec::norm(vec::cross(a, b)), vec::dot(a, b));
}

BodyFrame frameFor(const AngleDefinition& d, const Columns& c, const std::vector<Point3>& row,
                   const Point3& worldUp) {
  const Point3 leftHip = pointAt(row, c.leftHip);
  const Point3 rightHip = pointAt(row, c.rightHip);
  if (d.frame == BodyFrameKind::World) return worldFrame(leftHip, rightHip, worldUp);
  return trunkFrame(leftHip, rightHip, pointAt(row, c.pelvis), pointAt(row, c.thorax));
}

// The measured angle in radians, before sign and offset.
double measure(const AngleDefinition& d, const Columns& c, const std::vector<Point3>& row,
               const Point3& worldUp) {
  const auto p = [&](std::size_t i) { return pointAt(row, c.points[i]); };
  const Point3 first = vec::sub(p(1), p(0));
  switch (d.convention) {
    case AngleConvention::VectorAngle:
      return vectorAngle(first, vec::sub(p(3), p(2)));
    case AngleConvention::SignedVectorAngle: {
      const Point3 second = vec::sub(p(3), p(2));
      const Point3 axis = vec::sub(pointAt(row, c.axis[1]), pointAt(row, c.axis[0]));
      const double side = vec::dot(vec::cross(first, second), axis);
      if (std::isnan(side)) return NAN;
      return side < 0.0 ? -vectorAngle(first, second) : vectorAngle(first, second);
    }
    case AngleConvention::SagittalAngle: {
      const BodyFrame f = frameFor(d, c, row, worldUp);
      const Point3 reference = d.towardsUp ? f.up : vec::scale(f.up, -1.0);
      return std::atan2(vec::dot(first, f.forward), vec::dot(first, reference));
    }
    case AngleConvention::FrontalAngle: {
      const BodyFrame f = frameFor(d, c, row, worldUp);
      const Point3 side = d.towardsLeft ? f.left : vec::scale(f.left, -1.0);
      return std::asin(std::clamp(vec::dot(vec::unit(first), side), -1.0, 1.0));
    }
  }
  return NAN;
}

}  // namespace

AngleTable computeAngles(const MarkerTable& markers, const std::vector<AngleDefinition>& definitions,
                         const Point3& worldUp) {
  std::map<std::string, int> index;
  for (std::size_t m = 0; m < markers.names.size(); ++m) index[markers.names[m]] = static_cast<int>(m);
  AngleTable table;
  table.times = markers.times;
  std::vector<Columns> columns;
  for (const auto& d : definitions) {
    table.names.push_back(d.name);
    columns.push_back(resolve(d, index));
  }
  std::vector<std::vector<double>> series(definitions.size(), std::vector<double>(markers.rows.size()));
  for (std::size_t a = 0; a < definitions.size(); ++a) {
    for (std::size_t r = 0; r < markers.rows.size(); ++r) {
      const double radians = measure(definitions[a], columns[a], markers.rows[r], worldUp);
      series[a][r] = definitions[a].offsetDegrees + definitions[a].sign * radians * kDegreesPerRadian;
    }
    unwrapDegrees(series[a]);
  }
  table.rows.assign(markers.rows.size(), std::vector<double>(definitions.size()));
  for (std::size_t r = 0; r < markers.rows.size(); ++r)
    for (std::size_t a = 0; a < definitions.size(); ++a) table.rows[r][a] = series[a][r];
  return table;
}

void unwrapDegrees(std::vector<double>& degrees) {
  double previous = NAN;
  for (double& value : degrees) {
    if (!std::isfinite(value)) continue;
    if (std::isfinite(previous)) value -= 360.0 * std::round((value - previous) / 360.0);
    previous = value;
  }
}

}  // namespace sapiens::motion
