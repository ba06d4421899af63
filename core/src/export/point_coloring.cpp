#include "sapiens/export/point_coloring.h"

#include "sapiens/result/seg_classes.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sapiens {
namespace {

std::uint8_t toByte(float unit) {
  return static_cast<std::uint8_t>(std::clamp(unit, 0.0f, 1.0f) * 255.0f + 0.5f);
}

void colorByNormal(PointCloud& cloud) {
  const std::size_t count = cloud.vertexCount();
  if (cloud.normals.size() != count * 3)
    throw std::invalid_argument("colorPointCloud: the cloud has no normal for each vertex");
  cloud.colors.resize(count * 3);
  for (std::size_t i = 0; i < count * 3; ++i) cloud.colors[i] = toByte((cloud.normals[i] + 1.0f) * 0.5f);
}

void colorByDepth(PointCloud& cloud) {
  const std::size_t count = cloud.vertexCount();
  cloud.colors.resize(count * 3);
  if (count == 0) return;
  float nearest = cloud.positions[2], farthest = cloud.positions[2];
  for (std::size_t i = 0; i < count; ++i) {
    nearest = std::min(nearest, cloud.positions[i * 3 + 2]);
    farthest = std::max(farthest, cloud.positions[i * 3 + 2]);
  }
  cv::Mat levels(1, 256, CV_8UC1), turbo;
  for (int i = 0; i < 256; ++i) levels.at<std::uint8_t>(0, i) = static_cast<std::uint8_t>(i);
  cv::applyColorMap(levels, turbo, cv::COLORMAP_TURBO);  // BGR
  const float range = farthest > nearest ? farthest - nearest : 1.0f;
  for (std::size_t i = 0; i < count; ++i) {
    const int level = static_cast<int>(toByte((cloud.positions[i * 3 + 2] - nearest) / range));
    const cv::Vec3b bgr = turbo.at<cv::Vec3b>(0, level);
    for (int c = 0; c < 3; ++c) cloud.colors[i * 3 + c] = bgr[2 - c];
  }
}

void colorByBodyPart(PointCloud& cloud, const cv::Mat& segLabels, int imageWidth) {
  const std::size_t count = cloud.vertexCount();
  if (cloud.pixels.size() != count)
    throw std::invalid_argument("colorPointCloud: the cloud has no pixel index for each vertex");
  if (!segLabels.empty() && (segLabels.type() != CV_8UC1 || segLabels.cols != imageWidth))
    throw std::invalid_argument(
        "colorPointCloud: the seg labels are not a CV_8UC1 map of the picture's width");
  const auto& palette = seg29().palette;
  cloud.colors.assign(count * 3, 128);
  if (segLabels.empty()) return;
  for (std::size_t i = 0; i < count; ++i) {
    const int y = cloud.pixels[i] / imageWidth, x = cloud.pixels[i] % imageWidth;
    if (y >= segLabels.rows) continue;
    const std::size_t label = segLabels.at<std::uint8_t>(y, x);
    if (label >= palette.size()) continue;
    for (int c = 0; c < 3; ++c) cloud.colors[i * 3 + c] = palette[label][c];
  }
}

}  // namespace

std::string_view pointColoringName(PointColoring mode) {
  switch (mode) {
    case PointColoring::Picture:
      return "picture";
    case PointColoring::Normal:
      return "normal";
    case PointColoring::Depth:
      return "depth";
    case PointColoring::BodyPart:
      return "body-part";
  }
  return "picture";
}

std::optional<PointColoring> parsePointColoring(std::string_view name) {
  for (PointColoring mode :
       {PointColoring::Picture, PointColoring::Normal, PointColoring::Depth, PointColoring::BodyPart})
    if (pointColoringName(mode) == name) return mode;
  return std::nullopt;
}

void colorPointCloud(PointCloud& cloud, PointColoring mode, const cv::Mat& segLabels, int imageWidth) {
  switch (mode) {
    case PointColoring::Picture:
      return;
    case PointColoring::Normal:
      return colorByNormal(cloud);
    case PointColoring::Depth:
      return colorByDepth(cloud);
    case PointColoring::BodyPart:
      return colorByBodyPart(cloud, segLabels, imageWidth);
  }
}

}  // namespace sapiens
