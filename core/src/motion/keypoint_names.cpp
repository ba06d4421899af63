#include "sapiens/motion/keypoint_names.h"

#include "motion/json_table.h"
#include "sapiens/common/paths.h"
#include "sapiens/motion/motion_error.h"

#include <algorithm>

namespace sapiens::motion {

std::vector<std::string> loadKeypointNames(const std::string& path) {
  const nlohmann::json document = parseJsonTable(path, "a keypoint table");
  const auto names = document.find("names");
  if (names == document.end() || !names->is_array() || names->empty())
    throw MotionError(path + ": names: missing or not a non-empty list");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < names->size(); ++i) {
    if (!(*names)[i].is_string())
      throw MotionError(path + ": names[" + std::to_string(i) + "]: not a string");
    out.push_back((*names)[i].get<std::string>());
  }
  return out;
}

const std::vector<std::string>& goliathKeypointNames() {
  static const std::vector<std::string> names =
      loadKeypointNames(paths::resourceDir() + "/data/keypoints308.json");
  return names;
}

int goliathKeypointIndex(const std::string& name) {
  const auto& names = goliathKeypointNames();
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) throw MotionError("no keypoint named '" + name + "' in keypoints308.json");
  return static_cast<int>(found - names.begin());
}

}  // namespace sapiens::motion
