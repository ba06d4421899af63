#pragma once
// Goliath-308 keypoints in the layouts other tools read (resources/data/keypoint_formats.json): COCO-17,
// COCO-WholeBody-133 and OpenPose BODY_25 with its hands and face. A layout's keypoint is one Goliath
// keypoint, the midpoint of several, or absent where Goliath has no counterpart (the jaw contour).

#include "sapiens/result/frame_result.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sapiens {

enum class KeypointFormat { Coco17, CocoWholeBody, OpenPose };

/// "coco17", "wholebody", "openpose".
std::string_view keypointFormatName(KeypointFormat format);
/// The names above; std::nullopt otherwise.
std::optional<KeypointFormat> parseKeypointFormat(std::string_view text);
const std::vector<KeypointFormat>& keypointFormats();

/// One part of a layout ("body", "foot", "face", "lefthand", "righthand"; OpenPose: "pose", "face",
/// "hand_left", "hand_right"): its keypoints' names and the Goliath indices each is made of.
struct KeypointPart {
  std::string name;
  std::vector<std::string> names;
  std::vector<std::vector<int>> sources;  ///< empty: no Goliath counterpart
};

struct KeypointLayout {
  std::vector<KeypointPart> parts;           ///< by name
  std::vector<std::array<int, 2>> skeleton;  ///< 0-based, over the "body" part (COCO layouts)
  const KeypointPart& part(std::string_view name) const;
};

/// The layout, read from paths::resourceDir() + "/data/keypoint_formats.json" on first use and checked
/// against keypoints308() (every source a Goliath name). Throws ExportError naming the file and key.
const KeypointLayout& keypointLayout(KeypointFormat format);

/// One person's keypoints and scores in `part`'s order: a single source copied, several averaged with the
/// lowest of their scores; none (or a pose that lacks a source) with no position (NaN, NaN) and score 0,
/// which the writers put down as absent at any threshold.
PoseInstance convertPose(const PoseInstance& pose, const KeypointPart& part);

}  // namespace sapiens
