#include "sapiens/export/coco_keypoints.h"

#include "keypoint_triplets.h"
#include "result/json_support.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"
#include "sapiens/result/lifted_keypoint.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace sapiens {

namespace {

using json_support::Cursor;
using json_support::shortestNumber;

constexpr int kPersonCategory = 1;

nlohmann::json annotationJson(const PoseInstance& instance, float threshold, std::int64_t id,
                              std::int64_t imageId) {
  detail::KeypointTriplets keypoints =
      detail::keypointTriplets(instance, threshold, detail::TripletThird::Visibility);
  const BoundingBox& box = instance.bbox;
  nlohmann::json annotation = {{"id", id},
                               {"image_id", imageId},
                               {"category_id", kPersonCategory},
                               {"bbox",
                                {shortestNumber(box.x1), shortestNumber(box.y1), shortestNumber(box.width()),
                                 shortestNumber(box.height())}},
                               {"area", shortestNumber(box.width() * box.height())},
                               {"iscrowd", 0},
                               {"num_keypoints", keypoints.labelled},
                               {"keypoints", std::move(keypoints.values)}};
  if (instance.trackId >= 0) annotation["track_id"] = instance.trackId;  // as PoseTrack writes it
  return annotation;
}

}  // namespace

detail::KeypointTriplets detail::keypointTriplets(const PoseInstance& pose, float threshold,
                                                  TripletThird third) {
  KeypointTriplets t;
  for (std::size_t k = 0; k < pose.keypoints.size(); ++k) {
    const auto& [x, y] = pose.keypoints[k];
    if (!(pose.scores[k] >= threshold && std::isfinite(x) && std::isfinite(y))) {
      t.values.insert(t.values.end(), {0, 0, 0});
      continue;
    }
    t.values.insert(t.values.end(), {x, y});
    t.values.push_back(third == TripletThird::Score ? shortestNumber(pose.scores[k]) : nlohmann::json(2));
    ++t.labelled;
    t.x1 = std::min(t.x1, x), t.y1 = std::min(t.y1, y), t.x2 = std::max(t.x2, x), t.y2 = std::max(t.y2, y);
  }
  return t;
}

nlohmann::json detail::keypointQuadruples3d(const PoseInstance& pose, float threshold) {
  nlohmann::json values = nlohmann::json::array();
  for (std::size_t k = 0; k < pose.keypoints3d.size(); ++k) {
    if (!liftedKeypointCounts(pose, k, threshold)) {
      values.insert(values.end(), {0, 0, 0, 0});
      continue;
    }
    for (const double c : pose.keypoints3d[k]) values.push_back(shortestNumber(static_cast<float>(c)));
    values.push_back(shortestNumber(pose.scores[k]));
  }
  return values;
}

std::string cocoKeypointsJsonText(const KeypointPredictions& predictions, const KeypointMetadata& metadata) {
  return detail::cocoKeypointsDocument(predictions, metadata).dump();
}

nlohmann::json detail::cocoKeypointsDocument(const KeypointPredictions& predictions,
                                             const KeypointMetadata& metadata) {
  const auto count = static_cast<std::size_t>(predictions.numKeypoints);
  if (metadata.size() != count) {
    throw std::invalid_argument("COCO keypoints: the predictions have " + std::to_string(count) +
                                " keypoints, the keypoint names " + std::to_string(metadata.size()));
  }
  nlohmann::json images = nlohmann::json::array();
  nlohmann::json annotations = nlohmann::json::array();
  std::int64_t annotationId = 1;
  for (std::size_t f = 0; f < predictions.frames.size(); ++f) {
    const KeypointFrame& frame = predictions.frames[f];
    const auto imageId = static_cast<std::int64_t>(f) + 1;
    images.push_back({{"id", imageId},
                      {"file_name", frame.imageName},
                      {"width", predictions.imageWidth},
                      {"height", predictions.imageHeight}});
    for (std::size_t i = 0; i < frame.instances.size(); ++i) {
      const PoseInstance& instance = frame.instances[i];
      if (instance.keypoints.size() != count || instance.scores.size() != count) {
        throw std::invalid_argument("COCO keypoints: frames[" + std::to_string(f) + "].instances[" +
                                    std::to_string(i) + "] has " + std::to_string(instance.keypoints.size()) +
                                    " keypoints and " + std::to_string(instance.scores.size()) +
                                    " scores, expected " + std::to_string(count));
      }
      annotations.push_back(annotationJson(instance, predictions.keypointThreshold, annotationId++, imageId));
    }
  }
  nlohmann::json skeleton = nlohmann::json::array();
  for (const auto& link : metadata.skeletonLinks) skeleton.push_back({link[0] + 1, link[1] + 1});
  const nlohmann::json category = {{"id", kPersonCategory},
                                   {"name", "person"},
                                   {"supercategory", "person"},
                                   {"keypoints", metadata.names},
                                   {"skeleton", std::move(skeleton)}};
  const std::string description = "Sapiens2 Studio pose predictions" +
                                  (predictions.note.empty() ? std::string() : " (" + predictions.note + ")");
  nlohmann::json document = {{"info", {{"description", description}}},
                             {"images", std::move(images)},
                             {"annotations", std::move(annotations)},
                             {"categories", nlohmann::json::array({category})}};
  return document;
}

void writeCocoKeypoints(const std::string& path, const KeypointPredictions& predictions,
                        const KeypointMetadata& metadata) {
  std::string text;
  try {
    text = cocoKeypointsJsonText(predictions, metadata);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  writeFileAtomically(path, text);
}

CocoKeypointDataset readCocoKeypoints(const std::string& path) {
  const nlohmann::json document = json_support::parseFile(path);
  const Cursor root(path, document);
  CocoKeypointDataset dataset;

  std::map<std::int64_t, std::size_t> imageIndex;
  const auto images = root["images"];
  for (std::size_t i = 0; i < images.arraySize(); ++i) {
    CocoImage image;
    image.id = images[i]["id"].integer();
    image.fileName = images[i]["file_name"].string();
    image.width = static_cast<int>(images[i]["width"].integer());
    image.height = static_cast<int>(images[i]["height"].integer());
    if (!imageIndex.emplace(image.id, i).second) images[i]["id"].fail("duplicate image id");
    dataset.images.push_back(std::move(image));
  }

  const auto categories = root["categories"];
  for (std::size_t c = 0; c < categories.arraySize(); ++c) {
    const auto names = categories[c].optional("keypoints");
    if (!names) continue;
    for (std::size_t k = 0; k < names->arraySize(); ++k)
      dataset.keypointNames.push_back((*names)[k].string());
    if (const auto skeleton = categories[c].optional("skeleton")) {
      for (std::size_t l = 0; l < skeleton->arraySize(); ++l) {
        const auto link = (*skeleton)[l];
        link.arraySize(2);
        std::array<int, 2> ends{};
        for (std::size_t e = 0; e < 2; ++e) {
          const std::int64_t oneBased = link[e].integer();
          if (oneBased < 1 || oneBased > static_cast<std::int64_t>(dataset.keypointNames.size())) {
            link[e].fail("keypoint number out of range 1.." + std::to_string(dataset.keypointNames.size()));
          }
          ends[e] = static_cast<int>(oneBased - 1);
        }
        dataset.skeleton.push_back(ends);
      }
    }
    break;
  }

  const auto annotations = root["annotations"];
  for (std::size_t a = 0; a < annotations.arraySize(); ++a) {
    const auto entry = annotations[a];
    CocoKeypointAnnotation annotation;
    annotation.id = entry["id"].integer();
    annotation.imageId = entry["image_id"].integer();
    if (imageIndex.count(annotation.imageId) == 0) entry["image_id"].fail("no image with this id");
    const auto bbox = entry["bbox"];
    bbox.arraySize(4);
    const auto x = static_cast<float>(bbox[0].number());
    const auto y = static_cast<float>(bbox[1].number());
    annotation.bbox = {x, y, x + static_cast<float>(bbox[2].number()),
                       y + static_cast<float>(bbox[3].number())};
    const auto keypoints = entry["keypoints"];
    const std::size_t values = keypoints.arraySize();
    if (values % 3 != 0)
      keypoints.fail("holds " + std::to_string(values) + " numbers, not (x, y, v) triples");
    for (std::size_t k = 0; k < values; k += 3) {
      annotation.keypoints.push_back({keypoints[k].number(), keypoints[k + 1].number()});
      const std::int64_t visibility = keypoints[k + 2].integer();
      if (visibility < 0 || visibility > 2) keypoints[k + 2].fail("visibility must be 0, 1 or 2");
      annotation.visibility.push_back(static_cast<int>(visibility));
      if (visibility > 0) ++annotation.numKeypoints;
    }
    dataset.annotations.push_back(std::move(annotation));
  }
  return dataset;
}

}  // namespace sapiens
