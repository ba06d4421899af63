#include "sapiens/motion/bvh_skeleton.h"

#include "rotation_zxy.h"
#include "sample_interval.h"
#include "sapiens/motion/motion_error.h"
#include "sapiens/motion/y_up.h"
#include "vector3.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <optional>

namespace sapiens::motion {

namespace {

constexpr Point3 kLeft{1, 0, 0}, kRight{-1, 0, 0}, kUp{0, 1, 0}, kDown{0, -1, 0}, kForward{0, 0, 1};

/// How one joint is placed and turned. Its bone runs from `boneFrom` to `boneTo` (rest: `restBone`); its
/// second axis runs from `secondFrom` to `secondTo` (rest: `restSecond`), or, for a limb (secondFrom null),
/// is the normal of the plane through `bendPoints` (upper x lower segment; rest: `restSecond`).
struct JointSpec {
  const char* name;
  int parent;
  const char* at;
  Point3 offsetDirection;  // rest direction from the parent joint
  const char* boneFrom;
  const char* boneTo;
  Point3 restBone;
  const char* secondFrom;
  const char* secondTo;
  Point3 restSecond;
  std::array<const char*, 3> bendPoints;  // a limb's upper start, middle and lower end
  const char* endSite;
};

constexpr std::array<const char*, 3> kLeftArm{"left_shoulder", "left_elbow", "left_wrist"};
constexpr std::array<const char*, 3> kRightArm{"right_shoulder", "right_elbow", "right_wrist"};
constexpr std::array<const char*, 3> kLeftLeg{"left_hip", "left_knee", "left_ankle"};
constexpr std::array<const char*, 3> kRightLeg{"right_hip", "right_knee", "right_ankle"};

// Depth first, parents before children: the file's order. A limb's rest bend normal is its rest bone
// crossed with the way it bends at rest (arms: forward, +Z; legs: backward, -Z).
// clang-format off
// {name, parent, at, offset direction, bone from, to, rest,
//  second axis from, to, rest (or the limb's plane), end site}
constexpr JointSpec kJointSpecs[] = {
    {"Hips", -1, "pelvis", {}, "right_hip", "left_hip", kLeft,
     "pelvis", "spine", kUp, {}, nullptr},
    {"Spine", 0, "pelvis", kUp, "pelvis", "spine", kUp,
     "right_hip", "left_hip", kLeft, {}, nullptr},
    {"Chest", 1, "spine", kUp, "spine", "thorax", kUp,
     "right_shoulder", "left_shoulder", kLeft, {}, nullptr},
    {"Neck", 2, "thorax", kUp, "thorax", "head", kUp,
     "right_ear", "left_ear", kLeft, {}, nullptr},
    {"Head", 3, "head", kUp, "head", "nose", kForward,
     "right_ear", "left_ear", kLeft, {}, "nose"},
    {"LeftShoulder", 2, "thorax", kUp, "thorax", "left_shoulder", kLeft,
     "spine", "thorax", kUp, {}, nullptr},
    {"LeftArm", 5, "left_shoulder", kLeft, "left_shoulder", "left_elbow", kLeft,
     nullptr, nullptr, kDown, kLeftArm, nullptr},
    {"LeftForeArm", 6, "left_elbow", kLeft, "left_elbow", "left_wrist", kLeft,
     nullptr, nullptr, kDown, kLeftArm, "left_wrist"},
    {"RightShoulder", 2, "thorax", kUp, "thorax", "right_shoulder", kRight,
     "spine", "thorax", kUp, {}, nullptr},
    {"RightArm", 8, "right_shoulder", kRight, "right_shoulder", "right_elbow", kRight,
     nullptr, nullptr, kUp, kRightArm, nullptr},
    {"RightForeArm", 9, "right_elbow", kRight, "right_elbow", "right_wrist", kRight,
     nullptr, nullptr, kUp, kRightArm, "right_wrist"},
    {"LeftUpLeg", 0, "left_hip", kLeft, "left_hip", "left_knee", kDown,
     nullptr, nullptr, kLeft, kLeftLeg, nullptr},
    {"LeftLeg", 11, "left_knee", kDown, "left_knee", "left_ankle", kDown,
     nullptr, nullptr, kLeft, kLeftLeg, nullptr},
    {"LeftFoot", 12, "left_ankle", kDown, "left_ankle", "left_big_toe", kForward,
     "left_ankle", "left_knee", kUp, {}, "left_big_toe"},
    {"RightUpLeg", 0, "right_hip", kRight, "right_hip", "right_knee", kDown,
     nullptr, nullptr, kLeft, kRightLeg, nullptr},
    {"RightLeg", 14, "right_knee", kDown, "right_knee", "right_ankle", kDown,
     nullptr, nullptr, kLeft, kRightLeg, nullptr},
    {"RightFoot", 15, "right_ankle", kDown, "right_ankle", "right_big_toe", kForward,
     "right_ankle", "right_knee", kUp, {}, "right_big_toe"},
};
// clang-format on

const std::vector<JointSpec>& jointSpecs() {
  static const std::vector<JointSpec> specs(std::begin(kJointSpecs), std::end(kJointSpecs));
  return specs;
}

/// Marker columns and one row's points (Y up), by name.
class MarkerRow {
 public:
  explicit MarkerRow(const MarkerTable& table) {
    std::string missing;
    for (const auto& name : bvhMarkerNames()) {
      const auto found = std::find(table.names.begin(), table.names.end(), name);
      if (found == table.names.end())
        missing += (missing.empty() ? "" : ", ") + name;
      else
        columns_[name] = static_cast<std::size_t>(found - table.names.begin());
    }
    if (!missing.empty()) throw MotionError("BVH: the marker table has no " + missing);
  }

  /// Loads row `r`; false when a needed marker is missing there.
  bool load(const std::vector<Point3>& row) {
    for (const auto& [name, column] : columns_) {
      if (!vec::finite(row[column])) return false;
      points_[name] = toYUp(row[column]);
    }
    return true;
  }

  const Point3& operator()(const char* name) const { return points_.at(name); }

 private:
  std::map<std::string, std::size_t> columns_;
  std::map<std::string, Point3> points_;
};

double median(std::vector<double> values) {
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  if (values.size() % 2 == 1) return values[middle];
  return (values[middle] +
          *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle))) /
         2;
}

/// The median over the complete rows of the distance between two markers.
double medianDistance(const std::vector<MarkerRow>& rows, const char* from, const char* to) {
  std::vector<double> distances;
  distances.reserve(rows.size());
  for (const auto& row : rows) distances.push_back(vec::norm(vec::sub(row(to), row(from))));
  return median(distances);
}

std::vector<BvhJoint> restSkeleton(const std::vector<MarkerRow>& completeRows) {
  std::vector<BvhJoint> joints;
  const auto& specs = jointSpecs();
  for (const auto& spec : specs) {
    BvhJoint joint;
    joint.name = spec.name;
    joint.parent = spec.parent;
    if (spec.parent >= 0)
      joint.offset =
          vec::scale(spec.offsetDirection,
                     medianDistance(completeRows, specs[static_cast<std::size_t>(spec.parent)].at, spec.at));
    if (spec.endSite) {
      joint.hasEndSite = true;
      joint.endSite = vec::scale(spec.restBone, medianDistance(completeRows, spec.at, spec.endSite));
    }
    joints.push_back(joint);
  }
  return joints;
}

Point3 unit(const Point3& v) {
  return vec::unit(v);
}

/// A limb's second axis: the normal of its bend plane where the bend shows, else (blended in between 5
/// and 20 degrees of bend) the parent's rest axis carried along the shortest swing onto this bone.
Point3 limbAxis(const JointSpec& spec, const MarkerRow& points, const Point3& bone,
                const Matrix3& parentWorld) {
  const Point3 upper = vec::sub(points(spec.bendPoints[1]), points(spec.bendPoints[0]));
  const Point3 lower = vec::sub(points(spec.bendPoints[2]), points(spec.bendPoints[1]));
  const Point3 normal = vec::cross(upper, lower);
  const double sinBend = vec::norm(normal) / (vec::norm(upper) * vec::norm(lower));
  const Point3 swung = rotate(shortestRotation(unit(rotate(parentWorld, spec.restBone)), unit(bone)),
                              rotate(parentWorld, spec.restSecond));
  const double low = std::sin(5 * M_PI / 180), high = std::sin(20 * M_PI / 180);
  const double weight = std::clamp((sinBend - low) / (high - low), 0.0, 1.0);
  if (weight == 0.0) return swung;
  const Point3 mixed = vec::add(vec::scale(unit(normal), weight), vec::scale(swung, 1 - weight));
  return vec::norm(mixed) > 1e-6 ? mixed : swung;
}

/// Every joint's rotation in the world (Y-up) frame for one complete row.
std::vector<Matrix3> worldRotations(const MarkerRow& points) {
  const auto& specs = jointSpecs();
  std::vector<Matrix3> world(specs.size());
  for (std::size_t j = 0; j < specs.size(); ++j) {
    const JointSpec& spec = specs[j];
    const Point3 bone = vec::sub(points(spec.boneTo), points(spec.boneFrom));
    const Point3 second = spec.secondFrom
                              ? vec::sub(points(spec.secondTo), points(spec.secondFrom))
                              : limbAxis(spec, points, bone, world[static_cast<std::size_t>(spec.parent)]);
    world[j] = rotationOntoAxes(bone, second, spec.restBone, spec.restSecond);
  }
  return world;
}

void requireUsableTable(const MarkerTable& markers) {
  if (markers.rows.size() < 2 || markers.times.size() != markers.rows.size())
    throw MotionError("BVH: needs at least two rows with one time each (" +
                      std::to_string(markers.rows.size()) + " rows, " + std::to_string(markers.times.size()) +
                      " times)");
  try {
    requireIncreasingTimes(markers.times, "BVH");
  } catch (const std::invalid_argument& e) {
    throw MotionError(e.what());
  }
  for (std::size_t r = 0; r < markers.rows.size(); ++r)
    if (markers.rows[r].size() != markers.names.size())
      throw MotionError("BVH: row " + std::to_string(r) + " has " + std::to_string(markers.rows[r].size()) +
                        " markers for " + std::to_string(markers.names.size()) + " names");
}

}  // namespace

const std::vector<std::string>& bvhMarkerNames() {
  static const std::vector<std::string> names{
      "pelvis",      "spine",        "thorax",        "head",          "nose",           "left_ear",
      "right_ear",   "left_hip",     "right_hip",     "left_knee",     "right_knee",     "left_ankle",
      "right_ankle", "left_big_toe", "right_big_toe", "left_shoulder", "right_shoulder", "left_elbow",
      "right_elbow", "left_wrist",   "right_wrist"};
  return names;
}

BvhMotion buildBvhMotion(const MarkerTable& markers) {
  requireUsableTable(markers);
  MarkerRow points(markers);
  std::vector<std::optional<MarkerRow>> rows;
  std::vector<MarkerRow> completeRows;
  for (const auto& row : markers.rows) {
    if (points.load(row)) {
      rows.emplace_back(points);
      completeRows.push_back(points);
    } else {
      rows.emplace_back(std::nullopt);
    }
  }
  if (completeRows.empty()) throw MotionError("BVH: no row has every marker the skeleton needs");

  BvhMotion motion;
  motion.joints = restSkeleton(completeRows);
  motion.frameTime = medianSampleInterval(markers.times);
  const auto& specs = jointSpecs();
  std::vector<Point3> previous(specs.size(), Point3{0, 0, 0});
  std::optional<std::size_t> firstComplete;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    motion.heldFrames.push_back(!rows[r]);
    if (!rows[r]) {
      motion.rootPositions.push_back(r > 0 ? motion.rootPositions.back() : Point3{});
      motion.rotations.push_back(r > 0 ? motion.rotations.back() : previous);
      continue;
    }
    const std::vector<Matrix3> world = worldRotations(*rows[r]);
    for (std::size_t j = 0; j < specs.size(); ++j) {
      const int parent = specs[j].parent;
      const Matrix3 local =
          parent < 0 ? world[j] : multiply(transpose(world[static_cast<std::size_t>(parent)]), world[j]);
      previous[j] = continuousZXY(local, previous[j]);
    }
    motion.rootPositions.push_back((*rows[r])("pelvis"));
    motion.rotations.push_back(previous);
    if (!firstComplete) firstComplete = r;
  }
  for (std::size_t r = 0; r < *firstComplete; ++r) {  // leading rows take the first complete pose
    motion.rootPositions[r] = motion.rootPositions[*firstComplete];
    motion.rotations[r] = motion.rotations[*firstComplete];
  }
  return motion;
}

}  // namespace sapiens::motion
