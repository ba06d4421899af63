#include "sapiens/pipeline/person_box_file.h"

#include "sapiens/io/file_read.h"
#include "sapiens/pipeline/person_boxes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace sapiens {

namespace {

std::vector<BoundingBox> boxList(const nlohmann::json& list, const std::string& where) {
  if (!list.is_array()) throw std::runtime_error(where + ": expected a list of [x1, y1, x2, y2] boxes");
  std::vector<BoundingBox> boxes;
  for (const auto& b : list) {
    if (!b.is_array() || b.size() != 4 ||
        !std::all_of(b.begin(), b.end(), [](const nlohmann::json& v) { return v.is_number(); }))
      throw std::runtime_error(where + ": box " + b.dump() + " is not [x1, y1, x2, y2]");
    boxes.push_back(checkedBox(b[0].get<double>(), b[1].get<double>(), b[2].get<double>(), b[3].get<double>(),
                               where + " " + b.dump()));
  }
  return boxes;
}

std::map<std::int64_t, std::vector<BoundingBox>> framesList(const nlohmann::json& frames,
                                                            const std::string& path) {
  if (!frames.is_array())
    throw std::runtime_error(path + ": \"frames\" must be a list of {\"frame\": N, \"boxes\": [...]}");
  std::map<std::int64_t, std::vector<BoundingBox>> byFrame;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const nlohmann::json& entry = frames[i];
    const std::string where = path + " frames[" + std::to_string(i) + "]";
    if (!entry.is_object() || !entry.contains("frame") || !entry["frame"].is_number_integer() ||
        entry["frame"].get<std::int64_t>() < 0 || !entry.contains("boxes"))
      throw std::runtime_error(where + ": expected {\"frame\": N (0 or more), \"boxes\": [...]}");
    const std::int64_t frame = entry["frame"].get<std::int64_t>();
    if (!byFrame.emplace(frame, boxList(entry["boxes"], where)).second)
      throw std::runtime_error(where + ": frame " + std::to_string(frame) + " is listed twice");
  }
  return byFrame;
}

}  // namespace

PersonBoxFile readPersonBoxFile(const std::string& path) {
  const std::string text = readWholeFile(path, kMaxJsonFileBytes, "a box file (JSON)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not valid JSON: " + e.what());
  }
  PersonBoxFile file;
  if (j.is_object() && j.contains("frames")) {
    file.byFrame = framesList(j["frames"], path);
    if (j.contains("boxes")) file.everyFrame = boxList(j["boxes"], path);
  } else {
    file.everyFrame = boxList(j.is_object() && j.contains("boxes") ? j["boxes"] : j, path);
  }
  return file;
}

}  // namespace sapiens
