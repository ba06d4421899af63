#pragma once
// Person boxes the user gives in a JSON file (`--bbox-file`), for every picture or per video frame:
//   [[x1, y1, x2, y2], ...]  or  {"boxes": [...]}          the same boxes for every picture and frame
//   {"frames": [{"frame": N, "boxes": [...]}, ...]}        per frame of a video (N: 0-based index in the
//                                                          file); [] says nobody is there; frames it does
//                                                          not list get the file's "boxes" if it has
//                                                          them, else the automatic ones
// A detector or annotation tool's output converts to the second form with a few lines of script.

#include "sapiens/result/frame_result.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sapiens {

struct PersonBoxFile {
  std::vector<BoundingBox> everyFrame;
  std::map<std::int64_t, std::vector<BoundingBox>> byFrame;
};

/// Throws std::runtime_error naming the file and the offending entry.
PersonBoxFile readPersonBoxFile(const std::string& path);

}  // namespace sapiens
