#include "sapiens/result/seg_classes.h"

#include "result/json_support.h"
#include "sapiens/common/paths.h"

namespace sapiens {

SegClasses loadSegClasses(const std::string& path) {
  const nlohmann::json document = json_support::parseFile(path);
  const json_support::Cursor root(path, document);
  SegClasses classes;

  const auto names = root["names"];
  const std::size_t count = names.arraySize();
  if (count == 0 || count > 256) names.fail("expected 1 to 256 class names, found " + std::to_string(count));
  if (root.optional("num_classes") && root["num_classes"].integer() != static_cast<std::int64_t>(count)) {
    root["num_classes"].fail("says " + std::to_string(root["num_classes"].integer()) + " but names has " +
                             std::to_string(count));
  }
  for (std::size_t i = 0; i < count; ++i) classes.names.push_back(names[i].string());

  const auto palette = root["palette_rgb"];
  palette.arraySize(count);
  for (std::size_t i = 0; i < count; ++i) {
    classes.palette.push_back(json_support::readRgb(palette[i]));
  }
  return classes;
}

const SegClasses& seg29() {
  static const SegClasses classes = loadSegClasses(paths::resourceDir() + "/data/seg29.json");
  return classes;
}

}  // namespace sapiens
