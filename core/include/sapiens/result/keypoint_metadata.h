#pragma once
// The 308-keypoint layout of the Sapiens2 pose models (resources/data/keypoints308.json): names in output
// channel order, the skeleton and the colours of the official visualisation.

#include "sapiens/result/rgb.h"

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace sapiens {

struct KeypointMetadata {
  std::vector<std::string> names;                 ///< one per keypoint, in model output order
  std::vector<Rgb> keypointColors;                ///< RGB, one per keypoint
  std::vector<std::array<int, 2>> skeletonLinks;  ///< 0-based keypoint indices
  std::vector<Rgb> linkColors;                    ///< RGB, one per link
  std::vector<int> flipIndices;  ///< keypoint i becomes flipIndices[i] under a horizontal flip
  /// Named groups of keypoints ("body", "foot", "face", "left_hand", "right_hand", "extra"): indices in
  /// output order. Empty when the file names none.
  std::map<std::string, std::vector<int>> groups;

  std::size_t size() const { return names.size(); }
};

/// Reads and checks a keypoints json file (array lengths agree, link indices in range). Throws
/// ExportError naming the file and the offending key.
KeypointMetadata loadKeypointMetadata(const std::string& path);

/// The score below which the official demos leave a keypoint out (their kpt_thr): the default of every
/// threshold that draws, exports or turns predictions into labels.
inline constexpr float kDefaultKeypointThreshold = 0.3f;

/// paths::resourceDir() + "/data/keypoints308.json", read on first use (thread-safe).
const KeypointMetadata& keypoints308();

}  // namespace sapiens
