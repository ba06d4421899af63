#include "sapiens/export/converted_keypoints.h"

#include "keypoint_triplets.h"
#include "sapiens/export/coco_keypoints.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace sapiens {
namespace {

void requireGoliath(const KeypointPredictions& predictions) {
  const std::size_t count = keypoints308().size();
  for (std::size_t f = 0; f < predictions.frames.size(); ++f) {
    for (std::size_t i = 0; i < predictions.frames[f].instances.size(); ++i) {
      const PoseInstance& pose = predictions.frames[f].instances[i];
      if (pose.keypoints.size() != count || pose.scores.size() != count)
        throw std::invalid_argument(fmt::format(
            "frames[{}].instances[{}] has {} keypoints: only Goliath-308 poses convert to other layouts", f,
            i, pose.keypoints.size()));
    }
  }
}

KeypointPredictions convertedPredictions(const KeypointPredictions& predictions, const KeypointPart& part) {
  KeypointPredictions out = predictions;
  out.numKeypoints = static_cast<int>(part.names.size());
  for (KeypointFrame& frame : out.frames)
    for (PoseInstance& pose : frame.instances) pose = convertPose(pose, part);
  return out;
}

KeypointMetadata cocoMetadata(const KeypointLayout& layout) {
  KeypointMetadata metadata;
  metadata.names = layout.part("body").names;
  metadata.skeletonLinks = layout.skeleton;
  return metadata;
}

std::string wholeBodyText(const KeypointPredictions& predictions) {
  const KeypointLayout& layout = keypointLayout(KeypointFormat::CocoWholeBody);
  nlohmann::json document = detail::cocoKeypointsDocument(
      convertedPredictions(predictions, layout.part("body")), cocoMetadata(layout));
  std::size_t a = 0;
  for (const KeypointFrame& frame : predictions.frames) {
    for (const PoseInstance& pose : frame.instances) {
      nlohmann::json& annotation = document["annotations"][a++];
      for (const char* part : {"foot", "face", "lefthand", "righthand"}) {
        const detail::KeypointTriplets t =
            detail::keypointTriplets(convertPose(pose, layout.part(part)), predictions.keypointThreshold,
                                     detail::TripletThird::Visibility);
        annotation[fmt::format("{}_kpts", part)] = t.values;
        annotation[fmt::format("{}_valid", part)] = t.labelled > 0;
        if (std::string(part) != "foot") {
          annotation[fmt::format("{}_box", part)] = t.labelled > 0
                                                        ? nlohmann::json{t.x1, t.y1, t.x2 - t.x1, t.y2 - t.y1}
                                                        : nlohmann::json{0, 0, 0, 0};
        }
      }
    }
  }
  return document.dump();
}

std::string openPoseText(const KeypointPredictions& predictions) {
  const KeypointLayout& layout = keypointLayout(KeypointFormat::OpenPose);
  nlohmann::json people = nlohmann::json::array();
  if (!predictions.frames.empty()) {
    for (const PoseInstance& pose : predictions.frames.front().instances) {
      nlohmann::json person = {{"person_id", {pose.trackId}}};
      const auto keypoints2d = [&](const char* part) {
        return detail::keypointTriplets(convertPose(pose, layout.part(part)), predictions.keypointThreshold,
                                        detail::TripletThird::Score)
            .values;
      };
      person["pose_keypoints_2d"] = keypoints2d("pose");
      person["face_keypoints_2d"] = keypoints2d("face");
      person["hand_left_keypoints_2d"] = keypoints2d("hand_left");
      person["hand_right_keypoints_2d"] = keypoints2d("hand_right");
      const auto keypoints3d = [&](const char* part) {
        return detail::keypointQuadruples3d(convertPose(pose, layout.part(part)),
                                            predictions.keypointThreshold);
      };
      person["pose_keypoints_3d"] = keypoints3d("pose");
      person["face_keypoints_3d"] = keypoints3d("face");
      person["hand_left_keypoints_3d"] = keypoints3d("hand_left");
      person["hand_right_keypoints_3d"] = keypoints3d("hand_right");
      people.push_back(std::move(person));
    }
  }
  return nlohmann::json{{"version", 1.3}, {"people", std::move(people)}}.dump();
}

}  // namespace

std::string convertedKeypointsJsonText(KeypointFormat format, const KeypointPredictions& predictions) {
  requireGoliath(predictions);
  switch (format) {
    case KeypointFormat::Coco17: {
      const KeypointLayout& layout = keypointLayout(format);
      return cocoKeypointsJsonText(convertedPredictions(predictions, layout.part("body")),
                                   cocoMetadata(layout));
    }
    case KeypointFormat::CocoWholeBody:
      return wholeBodyText(predictions);
    case KeypointFormat::OpenPose:
      return openPoseText(predictions);
  }
  throw std::invalid_argument("unknown keypoint format");
}

void writeConvertedKeypoints(const std::string& path, KeypointFormat format,
                             const KeypointPredictions& predictions) {
  std::string text;
  try {
    text = convertedKeypointsJsonText(format, predictions);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  writeFileAtomically(path, text);
}

}  // namespace sapiens
