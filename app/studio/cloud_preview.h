#pragma once
// What the 3-D view draws of a point cloud. Every drawn point costs time on the GUI thread (and, with a
// software renderer, far more on the CPU), while a dock a few hundred pixels wide cannot show more
// points than it has pixels; so a dense cloud is thinned on its pixel grid (every k-th column of every
// k-th row) to at most kMaxPreviewPoints. Exports always write the whole cloud.

#include "sapiens/export/point_cloud.h"

#include <cstddef>

namespace sapiens::studio {

inline constexpr std::size_t kMaxPreviewPoints = 60000;

/// The grid step k (1, 2, 3, ...) that leaves at most `maxPoints` of `pointCount` points.
int previewStride(std::size_t pointCount, std::size_t maxPoints = kMaxPreviewPoints);

/// The vertices of `cloud` (positions and colours only) whose pixel's column and row are multiples of
/// previewStride; `imageWidth` is the width of the picture whose pixels cloud.pixels indexes.
PointCloud previewCloud(const PointCloud& cloud, int imageWidth, std::size_t maxPoints = kMaxPreviewPoints);

}  // namespace sapiens::studio
