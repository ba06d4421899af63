#include "sapiens/result/keypoint_metadata.h"

#include "result/json_support.h"
#include "sapiens/common/paths.h"

namespace sapiens {

KeypointMetadata loadKeypointMetadata(const std::string& path) {
  const nlohmann::json document = json_support::parseFile(path);
  const json_support::Cursor root(path, document);
  KeypointMetadata metadata;

  const auto names = root["names"];
  const std::size_t count = names.arraySize();
  if (root.optional("num_keypoints") && root["num_keypoints"].integer() != static_cast<std::int64_t>(count)) {
    root["num_keypoints"].fail("says " + std::to_string(root["num_keypoints"].integer()) + " but names has " +
                               std::to_string(count));
  }
  for (std::size_t i = 0; i < count; ++i) metadata.names.push_back(names[i].string());

  const auto colors = root["keypoint_colors"];
  colors.arraySize(count);
  for (std::size_t i = 0; i < count; ++i) metadata.keypointColors.push_back(json_support::readRgb(colors[i]));

  const auto links = root["skeleton_links"];
  const std::size_t linkCount = links.arraySize();
  for (std::size_t i = 0; i < linkCount; ++i) {
    links[i].arraySize(2);
    std::array<int, 2> link{};
    for (std::size_t end = 0; end < 2; ++end) {
      const std::int64_t index = links[i][end].integer();
      if (index < 0 || index >= static_cast<std::int64_t>(count))
        links[i][end].fail("keypoint index out of range");
      link[end] = static_cast<int>(index);
    }
    metadata.skeletonLinks.push_back(link);
  }

  const auto linkColors = root["skeleton_link_colors"];
  linkColors.arraySize(linkCount);
  for (std::size_t i = 0; i < linkCount; ++i)
    metadata.linkColors.push_back(json_support::readRgb(linkColors[i]));

  const auto flip = root["flip_indices"];
  flip.arraySize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::int64_t index = flip[i].integer();
    if (index < 0 || index >= static_cast<std::int64_t>(count)) flip[i].fail("keypoint index out of range");
    metadata.flipIndices.push_back(static_cast<int>(index));
  }
  if (const auto groups = root.optional("groups")) {
    if (!document["groups"].is_object()) groups->fail("is not an object of keypoint index lists");
    for (const auto& item : document["groups"].items()) {
      const auto group = (*groups)[item.key().c_str()];
      std::vector<int>& indices = metadata.groups[item.key()];
      for (std::size_t i = 0, n = group.arraySize(); i < n; ++i) {
        const std::int64_t index = group[i].integer();
        if (index < 0 || index >= static_cast<std::int64_t>(count))
          group[i].fail("keypoint index out of range");
        indices.push_back(static_cast<int>(index));
      }
    }
  }
  return metadata;
}

const KeypointMetadata& keypoints308() {
  static const KeypointMetadata metadata =
      loadKeypointMetadata(paths::resourceDir() + "/data/keypoints308.json");
  return metadata;
}

}  // namespace sapiens
