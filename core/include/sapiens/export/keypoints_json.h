#pragma once
// Pose predictions in the layout the official demo (vis_pose.py) writes:
//   {"video"?, "image_size": [H, W], "num_keypoints", "kpt_thr_used",
//    "frames": [{"image_name", "time"?, "instances": [{"bbox": [x1, y1, x2, y2], "bbox_source"?, "track_id"?,
//                                             "keypoints": [[x, y], ...], "keypoint_scores": [...],
//                                             "keypoints_3d"?: [[x, y, z] | null, ...]}]}]}
// One file per picture (one frame) or per video (one frame per decoded frame, "time" its presentation time
// in seconds). "keypoints_3d" (metres, the pointmap's camera frame) is written where a pointmap ran: null
// where the keypoint's score is below "kpt_thr_used" or the pointmap has no value there.

#include "sapiens/result/frame_result.h"
#include "sapiens/result/keypoint_metadata.h"

#include <optional>
#include <string>
#include <vector>

namespace sapiens {

struct KeypointFrame {
  std::string imageName;
  std::vector<PoseInstance> instances;
  std::optional<double> time = std::nullopt;  ///< presentation time in seconds (video frames)
};

struct KeypointPredictions {
  std::optional<std::string> video;  ///< written only when set
  int imageHeight = 0;
  int imageWidth = 0;
  int numKeypoints = 308;
  float keypointThreshold =
      kDefaultKeypointThreshold;  ///< "kpt_thr_used": the threshold the overlays were drawn with
  std::vector<KeypointFrame> frames;
  std::string note;  ///< "note", written only when set (e.g. that the model was untrained demo weights)
};

/// The JSON text (compact, as json.dump writes it). Floats are written as their shortest decimal form;
/// a non-finite coordinate or score becomes null. Throws std::invalid_argument naming the frame and
/// instance when an instance does not have numKeypoints keypoints and scores.
std::string keypointsJsonText(const KeypointPredictions& predictions);

void writeKeypointsJson(const std::string& path, const KeypointPredictions& predictions);

/// Reads files written by writeKeypointsJson or by the official demo ("video", "bbox_source", "time",
/// "keypoints_3d" optional; "num_keypoints" may be null; null coordinates, scores and 3-D points read as
/// NaN). Throws ExportError naming the
/// file and the key path (e.g. frames[2].instances[0].keypoints) of the first thing that is wrong.
KeypointPredictions readKeypointsJson(const std::string& path);

}  // namespace sapiens
