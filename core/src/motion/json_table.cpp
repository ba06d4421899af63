#include "motion/json_table.h"

#include "sapiens/io/file_read.h"
#include "sapiens/motion/motion_error.h"

namespace sapiens::motion {

nlohmann::json parseJsonTable(const std::string& path, std::string_view expected) {
  const std::string text = readWholeFile(path, kMaxJsonFileBytes, expected);
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw MotionError(path + ": not JSON (" + e.what() + ")");
  }
  if (!document.is_object())
    throw MotionError(path + ": not a JSON object, expected " + std::string(expected));
  return document;
}

}  // namespace sapiens::motion
