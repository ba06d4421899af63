#include "sapiens/result/keypoint_formats.h"

#include "result/json_support.h"
#include "sapiens/common/paths.h"
#include "sapiens/io/export_error.h"
#include "sapiens/result/keypoint_metadata.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace sapiens {
namespace {

constexpr double kNoPosition = std::numeric_limits<double>::quiet_NaN();

// Each layout's name for users and its key in keypoint_formats.json.
struct FormatEntry {
  KeypointFormat format;
  std::string_view name;
  const char* key;
};
constexpr FormatEntry kFormatEntries[] = {{KeypointFormat::Coco17, "coco17", "coco17"},
                                          {KeypointFormat::CocoWholeBody, "wholebody", "coco_wholebody"},
                                          {KeypointFormat::OpenPose, "openpose", "openpose_body25"}};

const FormatEntry& entryOf(KeypointFormat format) {
  for (const FormatEntry& entry : kFormatEntries)
    if (entry.format == format) return entry;
  throw std::invalid_argument("unknown keypoint format");
}

KeypointPart readPart(const json_support::Cursor& cursor, const std::string& name,
                      const std::map<std::string, int>& goliath) {
  KeypointPart part;
  part.name = name;
  for (std::size_t i = 0; i < cursor.arraySize(); ++i) {
    const json_support::Cursor entry = cursor[i];
    part.names.push_back(entry["name"].string());
    std::vector<int> sources;
    const json_support::Cursor from = entry["from"];
    for (std::size_t s = 0; s < from.arraySize(); ++s) {
      const auto found = goliath.find(from[s].string());
      if (found == goliath.end()) from[s].fail("\"" + from[s].string() + "\" is no Goliath-308 keypoint");
      sources.push_back(found->second);
    }
    part.sources.push_back(std::move(sources));
  }
  return part;
}

KeypointLayout readLayout(const std::string& path, KeypointFormat format) {
  const nlohmann::json document = json_support::parseFile(path);
  const json_support::Cursor root(path, document);
  std::map<std::string, int> goliath;
  for (std::size_t i = 0; i < keypoints308().names.size(); ++i) goliath[keypoints308().names[i]] = int(i);
  const json_support::Cursor layout = root["formats"][entryOf(format).key];
  KeypointLayout out;
  const json_support::Cursor parts = layout["parts"];
  for (const auto& [name, value] : document["formats"][entryOf(format).key]["parts"].items())
    out.parts.push_back(readPart(parts[name.c_str()], name, goliath));
  const json_support::Cursor skeleton = layout["skeleton"];
  for (std::size_t i = 0; i < skeleton.arraySize(); ++i) {
    const json_support::Cursor link = skeleton[i];
    link.arraySize(2);
    const auto a = int(link[0].integer()) - 1, b = int(link[1].integer()) - 1;  // 1-based as in COCO files
    const auto body =
        std::find_if(out.parts.begin(), out.parts.end(), [](const auto& p) { return p.name == "body"; });
    if (body == out.parts.end() || a < 0 || b < 0 || a >= int(body->names.size()) ||
        b >= int(body->names.size()))
      link.fail("a link to a keypoint the \"body\" part does not have");
    out.skeleton.push_back({a, b});
  }
  return out;
}

}  // namespace

std::string_view keypointFormatName(KeypointFormat format) {
  return entryOf(format).name;
}

std::optional<KeypointFormat> parseKeypointFormat(std::string_view text) {
  for (KeypointFormat format : keypointFormats())
    if (text == keypointFormatName(format)) return format;
  return std::nullopt;
}

const std::vector<KeypointFormat>& keypointFormats() {
  static const std::vector<KeypointFormat> formats = [] {
    std::vector<KeypointFormat> all;
    for (const FormatEntry& entry : kFormatEntries) all.push_back(entry.format);
    return all;
  }();
  return formats;
}

const KeypointPart& KeypointLayout::part(std::string_view name) const {
  for (const KeypointPart& p : parts)
    if (p.name == name) return p;
  throw std::invalid_argument(fmt::format("the keypoint layout has no part \"{}\"", name));
}

const KeypointLayout& keypointLayout(KeypointFormat format) {
  static const std::vector<KeypointLayout> layouts = [] {
    const std::string path = paths::resourceDir() + "/data/keypoint_formats.json";
    std::vector<KeypointLayout> all;
    for (KeypointFormat f : keypointFormats()) all.push_back(readLayout(path, f));
    return all;
  }();
  return layouts.at(static_cast<std::size_t>(format));
}

namespace {

// The mean of the sources' 3-D points: NaN unless every one of them has a value.
std::array<double, 3> meanPoint3d(const std::vector<std::array<double, 3>>& points,
                                  const std::vector<int>& sources) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  std::array<double, 3> mean{0.0, 0.0, 0.0};
  if (sources.empty()) return {nan, nan, nan};
  for (int s : sources) {
    if (s >= int(points.size())) return {nan, nan, nan};
    for (int c = 0; c < 3; ++c) mean[c] += points[s][c] / double(sources.size());
  }
  return mean;  // a NaN source makes the mean NaN
}

}  // namespace

PoseInstance convertPose(const PoseInstance& pose, const KeypointPart& part) {
  PoseInstance out;
  out.bbox = pose.bbox;
  out.bboxSource = pose.bboxSource;
  out.trackId = pose.trackId;
  for (const std::vector<int>& sources : part.sources) {
    const bool present = !sources.empty() && std::all_of(sources.begin(), sources.end(), [&](int s) {
      return s < int(pose.keypoints.size()) && s < int(pose.scores.size());
    });
    // No position at all where the layout's keypoint has no counterpart (or the pose lacks one): every
    // writer takes a non-finite keypoint as absent, whatever the threshold (a score of 0 is still labelled
    // at --kpt-thr 0).
    std::array<double, 2> point{kNoPosition, kNoPosition};
    float score = present ? pose.scores[sources.front()] : 0.0f;
    if (present) {
      point = {0.0, 0.0};
      for (int s : sources) {
        point[0] += pose.keypoints[s][0] / double(sources.size());
        point[1] += pose.keypoints[s][1] / double(sources.size());
        score = std::min(score, pose.scores[s]);
      }
    }
    out.keypoints.push_back(point);
    out.scores.push_back(score);
    if (!pose.keypoints3d.empty()) out.keypoints3d.push_back(meanPoint3d(pose.keypoints3d, sources));
  }
  return out;
}

}  // namespace sapiens
