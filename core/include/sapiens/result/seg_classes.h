#pragma once
// The 29 body-part classes of the Sapiens2 segmentation models (resources/data/seg29.json): names in
// output channel order and the official visualisation palette.

#include "sapiens/result/rgb.h"

#include <cstddef>
#include <string>
#include <vector>

namespace sapiens {

struct SegClasses {
  std::vector<std::string> names;  ///< index 0 = Background
  std::vector<Rgb> palette;        ///< RGB, one per class

  std::size_t size() const { return names.size(); }
};

/// Reads and checks a classes json file. Throws ExportError naming the file and the offending key.
SegClasses loadSegClasses(const std::string& path);

/// paths::resourceDir() + "/data/seg29.json", read on first use (thread-safe).
const SegClasses& seg29();

}  // namespace sapiens
