#pragma once
// What the 3-D view colours a pointmap's points by: the picture, the surface normal, the depth or the
// body part under each point.

#include "sapiens/export/point_cloud.h"

#include <opencv2/core/mat.hpp>

#include <optional>
#include <string_view>

namespace sapiens {

enum class PointColoring { Picture, Normal, Depth, BodyPart };

std::string_view pointColoringName(PointColoring mode);
/// "picture", "normal", "depth", "body-part", or nullopt.
std::optional<PointColoring> parsePointColoring(std::string_view name);

/// Colours `cloud`'s vertices by `mode`. Picture leaves the colours as built; Normal maps each unit normal
/// (camera frame) to ((n + 1) / 2) as RGB; Depth maps z from the nearest to the farthest vertex onto the
/// turbo colour map (near = dark blue); BodyPart gives each vertex the official seg palette colour of its
/// pixel's label in `segLabels` (CV_8UC1, the picture's size, `imageWidth` wide; grey where it is empty).
/// Normal needs the cloud's normals and BodyPart its pixel indices; throws std::invalid_argument
/// otherwise.
void colorPointCloud(PointCloud& cloud, PointColoring mode, const cv::Mat& segLabels, int imageWidth);

}  // namespace sapiens
