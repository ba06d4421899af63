#pragma once
// Results drawn over the picture: the official pose visualisation (pose_render_utils.visualize_keypoints)
// plus the person boxes, and the official segmentation blend (SegVisualizer).

#include "sapiens/result/frame_result.h"
#include "sapiens/result/keypoint_metadata.h"

#include <opencv2/core/mat.hpp>

#include <vector>

namespace sapiens {

struct KeypointMetadata;
struct SegClasses;

struct PoseDrawStyle {
  float keypointThreshold =
      kDefaultKeypointThreshold;  ///< keypoints (and links) with a lower score are not drawn
  int radius = 8;                 ///< filled keypoint circles
  int thickness = 8;              ///< skeleton links
  int boxThickness = 2;           ///< person boxes; 0 = no boxes
};

/// The official demo's radius and thickness (8 px) scaled by the longer image side / 1024, at least 1.
PoseDrawStyle poseDrawStyleFor(cv::Size imageSize, float keypointThreshold = kDefaultKeypointThreshold);

/// Draws on `imageBgr` (CV_8UC3), per instance: its box (green; a tracked person's in their track's
/// colour, with "#id" on a tag at its top-left corner), then each skeleton link whose two ends
/// score >= the threshold and lie inside the picture (after rounding half to even), then each keypoint
/// that does, as anti-aliased lines and filled circles in `metadata`'s colours. Throws
/// std::invalid_argument when an instance has more keypoints than `metadata` describes.
void drawPoses(cv::Mat& imageBgr, const std::vector<PoseInstance>& poses, const KeypointMetadata& metadata,
               const PoseDrawStyle& style);

/// Each label's palette colour, as BGR (CV_8UC3); labels without a class are black.
cv::Mat colorizeLabels(const cv::Mat& labels, const SegClasses& classes);

/// The official visualiser's weight of the part colours.
inline constexpr double kSegmentationOverlayOpacity = 0.5;

/// imageBgr * (1 - opacity) + colorizeLabels(labels) * opacity (cv::addWeighted, as the official
/// visualiser). Throws std::invalid_argument on a type or size mismatch.
cv::Mat segmentationOverlay(const cv::Mat& imageBgr, const cv::Mat& labels, const SegClasses& classes,
                            double opacity = kSegmentationOverlayOpacity);

/// The same for rows [firstRow, firstRow + out.rows) only, into `out` (CV_8UC3, the picture's width):
/// the pieces a large overlay is made of, a band at a time. Throws std::invalid_argument on a mismatch.
void blendSegmentationRows(const cv::Mat& imageBgr, const cv::Mat& labels, const SegClasses& classes,
                           double opacity, int firstRow, cv::Mat& out);

}  // namespace sapiens
