#include "sapiens/export/keypoints_json.h"

#include "result/json_support.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"
#include "sapiens/result/lifted_keypoint.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace sapiens {

namespace {

using json_support::Cursor;
using json_support::finiteNumber;
using json_support::shortestNumber;

void checkInstance(const PoseInstance& instance, int numKeypoints, std::size_t frame, std::size_t index) {
  const auto expected = static_cast<std::size_t>(numKeypoints);
  if (instance.keypoints.size() != expected || instance.scores.size() != expected) {
    throw std::invalid_argument("keypoints json: frames[" + std::to_string(frame) + "].instances[" +
                                std::to_string(index) + "] has " + std::to_string(instance.keypoints.size()) +
                                " keypoints and " + std::to_string(instance.scores.size()) +
                                " scores, expected " + std::to_string(numKeypoints));
  }
  if (!instance.keypoints3d.empty() && instance.keypoints3d.size() != expected)
    throw std::invalid_argument("keypoints json: frames[" + std::to_string(frame) + "].instances[" +
                                std::to_string(index) + "] has " +
                                std::to_string(instance.keypoints3d.size()) + " 3-D keypoints, expected " +
                                std::to_string(numKeypoints));
}

// Written where the keypoint counts (its score at or above the threshold) and the pointmap had a value.
nlohmann::json keypoints3dJson(const PoseInstance& instance, float threshold) {
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t k = 0; k < instance.keypoints3d.size(); ++k) {
    const auto& p = instance.keypoints3d[k];
    if (liftedKeypointCounts(instance, k, threshold))
      points.push_back({shortestNumber(static_cast<float>(p[0])), shortestNumber(static_cast<float>(p[1])),
                        shortestNumber(static_cast<float>(p[2]))});
    else
      points.push_back(nullptr);
  }
  return points;
}

nlohmann::json instanceJson(const PoseInstance& instance, float threshold) {
  nlohmann::json keypoints = nlohmann::json::array();
  for (const auto& point : instance.keypoints)
    keypoints.push_back({finiteNumber(point[0]), finiteNumber(point[1])});
  nlohmann::json scores = nlohmann::json::array();
  for (const float score : instance.scores) scores.push_back(shortestNumber(score));
  nlohmann::json json = nlohmann::json::object();
  json["bbox"] = {shortestNumber(instance.bbox.x1), shortestNumber(instance.bbox.y1),
                  shortestNumber(instance.bbox.x2), shortestNumber(instance.bbox.y2)};
  if (!instance.bboxSource.empty()) json["bbox_source"] = instance.bboxSource;
  if (instance.trackId >= 0) json["track_id"] = instance.trackId;
  json["keypoints"] = std::move(keypoints);
  json["keypoint_scores"] = std::move(scores);
  if (!instance.keypoints3d.empty()) json["keypoints_3d"] = keypoints3dJson(instance, threshold);
  return json;
}

double numberOrNan(const Cursor& cursor) {
  return cursor.isNull() ? std::numeric_limits<double>::quiet_NaN() : cursor.number();
}

PoseInstance readInstance(const Cursor& cursor) {
  PoseInstance instance;
  const auto bbox = cursor["bbox"];
  bbox.arraySize(4);
  instance.bbox = {static_cast<float>(bbox[0].number()), static_cast<float>(bbox[1].number()),
                   static_cast<float>(bbox[2].number()), static_cast<float>(bbox[3].number())};
  if (!instance.bbox.isFinite()) bbox.fail("a coordinate is outside the range of a float");
  if (const auto source = cursor.optional("bbox_source")) instance.bboxSource = source->string();
  if (const auto track = cursor.optional("track_id")) {
    const std::int64_t id = track->integer();
    if (id < 0 || id > std::numeric_limits<int>::max()) track->fail("a track id is a non-negative integer");
    instance.trackId = static_cast<int>(id);
  }

  const auto keypoints = cursor["keypoints"];
  const std::size_t count = keypoints.arraySize();
  for (std::size_t k = 0; k < count; ++k) {
    keypoints[k].arraySize(2);
    instance.keypoints.push_back({numberOrNan(keypoints[k][0]), numberOrNan(keypoints[k][1])});
  }
  const auto scores = cursor["keypoint_scores"];
  scores.arraySize(count);
  for (std::size_t k = 0; k < count; ++k)
    instance.scores.push_back(static_cast<float>(numberOrNan(scores[k])));
  if (const auto points = cursor.optional("keypoints_3d")) {
    points->arraySize(count);
    constexpr double nan = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t k = 0; k < count; ++k) {
      const auto point = (*points)[k];
      if (point.isNull()) {
        instance.keypoints3d.push_back({nan, nan, nan});
        continue;
      }
      point.arraySize(3);
      instance.keypoints3d.push_back({numberOrNan(point[0]), numberOrNan(point[1]), numberOrNan(point[2])});
    }
  }
  return instance;
}

}  // namespace

std::string keypointsJsonText(const KeypointPredictions& predictions) {
  nlohmann::json frames = nlohmann::json::array();
  for (std::size_t f = 0; f < predictions.frames.size(); ++f) {
    const KeypointFrame& frame = predictions.frames[f];
    nlohmann::json instances = nlohmann::json::array();
    for (std::size_t i = 0; i < frame.instances.size(); ++i) {
      checkInstance(frame.instances[i], predictions.numKeypoints, f, i);
      instances.push_back(instanceJson(frame.instances[i], predictions.keypointThreshold));
    }
    nlohmann::json entry = {{"image_name", frame.imageName}};
    if (frame.time) entry["time"] = finiteNumber(*frame.time);
    entry["instances"] = std::move(instances);
    frames.push_back(std::move(entry));
  }
  nlohmann::json document = nlohmann::json::object();
  if (predictions.video) document["video"] = *predictions.video;
  document["image_size"] = {predictions.imageHeight, predictions.imageWidth};
  document["num_keypoints"] = predictions.numKeypoints;
  document["kpt_thr_used"] = shortestNumber(predictions.keypointThreshold);
  document["frames"] = std::move(frames);
  if (!predictions.note.empty()) document["note"] = predictions.note;
  return document.dump();
}

void writeKeypointsJson(const std::string& path, const KeypointPredictions& predictions) {
  std::string text;
  try {
    text = keypointsJsonText(predictions);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  writeFileAtomically(path, text);
}

KeypointPredictions readKeypointsJson(const std::string& path) {
  const nlohmann::json document = json_support::parseFile(path);
  const Cursor root(path, document);
  KeypointPredictions predictions;
  if (const auto video = root.optional("video")) predictions.video = video->string();
  if (const auto note = root.optional("note")) predictions.note = note->string();

  const auto size = root["image_size"];
  size.arraySize(2);
  const std::int64_t height = size[0].integer();
  const std::int64_t width = size[1].integer();
  if (height < 0 || width < 0 || height > std::numeric_limits<int>::max() ||
      width > std::numeric_limits<int>::max()) {
    size.fail("not an image size");
  }
  predictions.imageHeight = static_cast<int>(height);
  predictions.imageWidth = static_cast<int>(width);
  predictions.keypointThreshold = static_cast<float>(root["kpt_thr_used"].number());
  if (!std::isfinite(predictions.keypointThreshold))
    root["kpt_thr_used"].fail("outside the range of a float");

  const auto frames = root["frames"];
  for (std::size_t f = 0; f < frames.arraySize(); ++f) {
    KeypointFrame frame;
    frame.imageName = frames[f]["image_name"].string();
    if (const auto time = frames[f].optional("time")) {
      frame.time = time->number();
      if (!std::isfinite(*frame.time)) time->fail("not a time in seconds");
    }
    const auto instances = frames[f]["instances"];
    for (std::size_t i = 0; i < instances.arraySize(); ++i)
      frame.instances.push_back(readInstance(instances[i]));
    predictions.frames.push_back(std::move(frame));
  }

  // The official demo writes null when it saw no person; the instances then tell nothing either.
  std::optional<std::int64_t> declared;
  if (const auto count = root.optional("num_keypoints")) {
    declared = count->integer();
    if (*declared < 0 || *declared > std::numeric_limits<int>::max()) count->fail("not a keypoint count");
  }
  std::optional<std::size_t> seen;
  for (std::size_t f = 0; f < predictions.frames.size(); ++f) {
    for (std::size_t i = 0; i < predictions.frames[f].instances.size(); ++i) {
      const std::size_t count = predictions.frames[f].instances[i].keypoints.size();
      if (!seen) seen = count;
      const bool mismatch = declared ? static_cast<std::int64_t>(count) != *declared : count != *seen;
      if (mismatch) {
        frames[f]["instances"][i]["keypoints"].fail(
            "has " + std::to_string(count) + " keypoints, expected " +
            std::to_string(declared ? static_cast<std::size_t>(*declared) : *seen));
      }
    }
  }
  predictions.numKeypoints = static_cast<int>(declared ? *declared : seen.value_or(0));
  return predictions;
}

}  // namespace sapiens
