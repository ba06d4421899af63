#pragma once
// Pose predictions (Goliath-308) written in the layouts other tools read, through the table of
// result/keypoint_formats.h:
//   coco17     a COCO keypoints file: 17 keypoints, COCO's skeleton (pycocotools, CVAT, FiftyOne);
//   wholebody  COCO-WholeBody annotations: keypoints (body 17), foot_kpts (6), face_kpts (68),
//              lefthand_kpts and righthand_kpts (21 each), their *_valid flags and face/hand boxes;
//   openpose   OpenPose's JSON (version 1.3): people[] with pose_keypoints_2d (BODY_25),
//              face_keypoints_2d (70), hand_left/right_keypoints_2d (21); one file per picture (the first
//              frame's people).
// A keypoint below the threshold, non-finite, or without a Goliath counterpart is absent: (0, 0, 0), at
// any threshold (0 included), and counts towards no *_valid flag or face/hand box.

#include "sapiens/export/keypoints_json.h"
#include "sapiens/result/keypoint_formats.h"

#include <string>

namespace sapiens {

/// Throws std::invalid_argument when an instance does not have 308 keypoints and scores.
std::string convertedKeypointsJsonText(KeypointFormat format, const KeypointPredictions& predictions);

/// Atomic; ExportError naming `path` for what convertedKeypointsJsonText refuses.
void writeConvertedKeypoints(const std::string& path, KeypointFormat format,
                             const KeypointPredictions& predictions);

}  // namespace sapiens
