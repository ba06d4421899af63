#include "sapiens/motion/joint_angle_table.h"

#include "motion/json_table.h"
#include "sapiens/common/paths.h"
#include "sapiens/motion/derived_points.h"
#include "sapiens/motion/keypoint_names.h"
#include "sapiens/motion/motion_error.h"

#include <algorithm>
#include <set>

namespace sapiens::motion {

namespace {

// One entry of the table, with the file and entry for messages.
struct Entry {
  const std::string& path;
  const nlohmann::json& json;
  std::string where;  // "angles[3]"

  [[noreturn]] void fail(const std::string& key, const std::string& reason) const {
    throw MotionError(path + ": " + where + "." + key + ": " + reason);
  }
  std::string text(const std::string& key) const {
    const auto found = json.find(key);
    if (found == json.end() || !found->is_string() || found->get<std::string>().empty())
      fail(key, "missing or not a non-empty string");
    return found->get<std::string>();
  }
  double number(const std::string& key, double fallback) const {
    const auto found = json.find(key);
    if (found == json.end()) return fallback;
    if (!found->is_number()) fail(key, "not a number");
    return found->get<double>();
  }
  std::string choice(const std::string& key, const std::vector<std::string>& allowed) const {
    const std::string value = text(key);
    if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return value;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    fail(key, "'" + value + "' is not one of " + list);
  }
  std::vector<std::string> pointNames(const std::string& key, std::size_t count) const;
};

bool isPointName(const std::string& name) {
  const auto& derived = derivedPointNames();
  const auto& names = goliathKeypointNames();
  return std::find(derived.begin(), derived.end(), name) != derived.end() ||
         std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<std::string> Entry::pointNames(const std::string& key, std::size_t count) const {
  const auto found = json.find(key);
  if (found == json.end() || !found->is_array() || found->size() != count)
    fail(key, "missing or not a list of " + std::to_string(count) + " point names");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& item = (*found)[i];
    if (!item.is_string() || !isPointName(item.get<std::string>()))
      fail(key + "[" + std::to_string(i) + "]", "not a keypoint of keypoints308.json nor a derived point");
    out.push_back(item.get<std::string>());
  }
  return out;
}

AngleDefinition readDefinition(const Entry& entry) {
  AngleDefinition d;
  d.name = entry.text("name");
  const std::string convention =
      entry.choice("convention", {"vector_angle", "signed_vector_angle", "sagittal_angle", "frontal_angle"});
  const bool segment = convention == "sagittal_angle" || convention == "frontal_angle";
  d.points = entry.pointNames("points", segment ? 2 : 4);
  if (convention == "vector_angle") d.convention = AngleConvention::VectorAngle;
  if (convention == "signed_vector_angle") {
    d.convention = AngleConvention::SignedVectorAngle;
    d.axis = entry.pointNames("axis", 2);
  }
  if (segment) {
    d.frame =
        entry.choice("frame", {"trunk", "world"}) == "world" ? BodyFrameKind::World : BodyFrameKind::Trunk;
  }
  if (convention == "sagittal_angle") {
    d.convention = AngleConvention::SagittalAngle;
    d.towardsUp = entry.choice("reference", {"up", "down"}) == "up";
  }
  if (convention == "frontal_angle") {
    d.convention = AngleConvention::FrontalAngle;
    d.towardsLeft = entry.choice("towards", {"left", "right"}) == "left";
  }
  d.sign = entry.number("sign", 0.0);
  if (d.sign != 1.0 && d.sign != -1.0) entry.fail("sign", "must be 1 or -1");
  d.offsetDegrees = entry.number("offset_deg", 0.0);
  d.unit = entry.choice("unit", {"deg"});
  d.description = entry.text("description");
  if (entry.json.contains("opensim")) {
    const Entry opensim{entry.path, entry.json["opensim"], entry.where + ".opensim"};
    if (!opensim.json.is_object()) entry.fail("opensim", "not an object {coordinate, sign}");
    d.opensimCoordinate = opensim.text("coordinate");
    d.opensimSign = opensim.number("sign", 0.0);
    if (d.opensimSign != 1.0 && d.opensimSign != -1.0) opensim.fail("sign", "must be 1 or -1");
  }
  return d;
}

std::string listNames(const std::vector<AngleDefinition>& table) {
  std::string list;
  for (const auto& d : table) list += (list.empty() ? "" : ", ") + d.name;
  return list;
}

}  // namespace

std::vector<AngleDefinition> loadAngleTable(const std::string& path) {
  const nlohmann::json document = parseJsonTable(path, "a joint angle table");
  const auto angles = document.find("angles");
  if (angles == document.end() || !angles->is_array() || angles->empty())
    throw MotionError(path + ": angles: missing or not a non-empty list");
  std::vector<AngleDefinition> table;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < angles->size(); ++i) {
    const Entry entry{path, (*angles)[i], "angles[" + std::to_string(i) + "]"};
    if (!entry.json.is_object()) throw MotionError(path + ": " + entry.where + ": not an object");
    table.push_back(readDefinition(entry));
    if (!seen.insert(table.back().name).second) entry.fail("name", "'" + table.back().name + "' repeated");
  }
  return table;
}

const std::vector<AngleDefinition>& jointAngleTable() {
  static const std::vector<AngleDefinition> table =
      loadAngleTable(paths::resourceDir() + "/data/joint_angles.json");
  return table;
}

std::vector<AngleDefinition> selectAngles(const std::vector<AngleDefinition>& table,
                                          const std::vector<std::string>& names) {
  if (names.empty()) return table;
  std::vector<AngleDefinition> chosen;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    const auto found =
        std::find_if(table.begin(), table.end(), [&](const AngleDefinition& d) { return d.name == name; });
    if (found == table.end())
      throw MotionError("unknown angle '" + name + "'; the angles are: " + listNames(table));
    if (!seen.insert(name).second) throw MotionError("angle '" + name + "' is asked for twice");
    chosen.push_back(*found);
  }
  return chosen;
}

}  // namespace sapiens::motion
