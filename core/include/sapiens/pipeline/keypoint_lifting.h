#pragma once
// Keypoints lifted to 3-D by the pointmap of the same picture: each keypoint's (x, y, z) is the median, per
// coordinate, of the valid pointmap samples in a small window around it, so that a keypoint on the
// silhouette's edge does not take the background's depth. Where segmentation (or matting) ran, only the
// person's pixels count.

#include "sapiens/result/frame_result.h"

#include <array>
#include <vector>

namespace sapiens {

/// The window's radius in pixels for a person of this box: 1.5 % of its longer side, 2 to 16 pixels.
int liftingRadius(const BoundingBox& box);

/// One pose's keypoints in 3-D from `pointmap` (CV_32FC3, the picture's grid). `personMask` (CV_8UC1, same
/// size, non-zero = person) may be empty. NaN where the keypoint is not finite, outside the picture, or no
/// valid sample (finite, z > 0, on the person) lies in its window.
std::vector<std::array<double, 3>> liftKeypoints(const PoseInstance& pose, const cv::Mat& pointmap,
                                                 const cv::Mat& personMask);

/// Fills keypoints3d of every pose of `frame` when it has both poses and a pointmap (clears them when it
/// has no pointmap); the person mask from its segmentation, else its matte.
void liftFrameKeypoints(FrameResult& frame);

}  // namespace sapiens
