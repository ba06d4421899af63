#pragma once
// The flat keypoint lists of the COCO family of files, shared by coco_keypoints.cpp (COCO with Goliath's
// 308) and converted_keypoints.cpp (COCO-17, COCO-WholeBody, OpenPose).

#include "sapiens/export/keypoints_json.h"
#include "sapiens/result/keypoint_metadata.h"

#include <nlohmann/json.hpp>

#include <limits>

namespace sapiens::detail {

/// What the third number of a triplet says: COCO's visibility (2) or the keypoint's score (OpenPose).
enum class TripletThird { Visibility, Score };

struct KeypointTriplets {
  nlohmann::json values = nlohmann::json::array();  ///< x, y, third per keypoint
  int labelled = 0;                                 ///< keypoints scored >= the threshold
  /// Box of the labelled keypoints (x1 > x2 when none is).
  double x1 = std::numeric_limits<double>::max(), y1 = x1, x2 = -x1, y2 = -x1;
};

/// (x, y, third) for a keypoint scored >= `threshold` with finite coordinates, (0, 0, 0) for any other
/// (the COCO convention for an absent keypoint).
KeypointTriplets keypointTriplets(const PoseInstance& pose, float threshold, TripletThird third);

/// OpenPose's 3-D list: (x, y, z, score) per keypoint scored >= `threshold` with a finite 3-D point, (0, 0,
/// 0, 0) for any other; empty when the pose has no 3-D points.
nlohmann::json keypointQuadruples3d(const PoseInstance& pose, float threshold);

/// A COCO keypoints document (images, annotations, categories) for `predictions`, one person category
/// with `metadata`'s names and 1-based skeleton. Throws std::invalid_argument when an instance does not
/// have metadata.size() keypoints and scores.
nlohmann::json cocoKeypointsDocument(const KeypointPredictions& predictions,
                                     const KeypointMetadata& metadata);

}  // namespace sapiens::detail
