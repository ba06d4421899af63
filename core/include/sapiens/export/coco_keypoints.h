#pragma once
// Pose predictions as a COCO keypoints file (images, annotations, categories), the format annotation
// tools (CVAT, Label Studio, FiftyOne) and pycocotools load.
//
// Visibility: a keypoint whose score is >= the threshold is written as (x, y, 2) "labelled and visible";
// any other as (0, 0, 0) "not labelled", the COCO convention for absent keypoints (pycocotools ignores
// them). Raw heatmap scores do not tell occluded from absent, so the flag 1 is never written.

#include "sapiens/export/keypoints_json.h"
#include "sapiens/result/keypoint_metadata.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sapiens {

struct CocoImage {
  std::int64_t id = 0;
  std::string fileName;
  int width = 0;
  int height = 0;
};

struct CocoKeypointAnnotation {
  std::int64_t id = 0;
  std::int64_t imageId = 0;
  BoundingBox bbox;                              ///< converted from COCO's [x, y, width, height]
  std::vector<std::array<double, 2>> keypoints;  ///< (x, y); (0, 0) where visibility is 0
  std::vector<int> visibility;                   ///< 0 not labelled, 1 labelled but hidden, 2 visible
  int numKeypoints = 0;                          ///< how many have visibility > 0
};

struct CocoKeypointDataset {
  std::vector<CocoImage> images;
  std::vector<CocoKeypointAnnotation> annotations;
  std::vector<std::string> keypointNames;    ///< of the (first) person category
  std::vector<std::array<int, 2>> skeleton;  ///< 0-based here; 1-based in the file
};

/// One image per frame (id = frame index + 1, file_name = image name, the predictions' image size), one
/// annotation per instance (ids from 1, category 1 "person", bbox [x1, y1, x2 - x1, y2 - y1], area =
/// bbox area, iscrowd 0), and the person category with `metadata`'s names and 1-based skeleton.
std::string cocoKeypointsJsonText(const KeypointPredictions& predictions, const KeypointMetadata& metadata);

void writeCocoKeypoints(const std::string& path, const KeypointPredictions& predictions,
                        const KeypointMetadata& metadata);

/// Reads a COCO keypoints file (any tool's). Throws ExportError naming the file and the key path of the
/// first thing that is wrong (missing key, keypoints not a multiple of 3, image id not listed).
CocoKeypointDataset readCocoKeypoints(const std::string& path);

}  // namespace sapiens
