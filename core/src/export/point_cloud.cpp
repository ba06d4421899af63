#include "sapiens/export/point_cloud.h"

#include "sapiens/result/frame_result.h"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace sapiens {

namespace {

std::string sizeText(const cv::Mat& matrix) {
  return std::to_string(matrix.cols) + "x" + std::to_string(matrix.rows) + " " +
         cv::typeToString(matrix.type());
}

void checkMatrix(const cv::Mat& matrix, const char* name, int type, const cv::Mat& pointmap) {
  if (matrix.empty()) return;
  if (matrix.type() != type || matrix.size() != pointmap.size()) {
    throw std::invalid_argument(std::string("point cloud: ") + name + " is " + sizeText(matrix) +
                                ", expected " + std::to_string(pointmap.cols) + "x" +
                                std::to_string(pointmap.rows) + " " + cv::typeToString(type) +
                                " like the pointmap");
  }
}

bool isValidPoint(const cv::Vec3f& p) {
  return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]) && p[2] > 0.0f;
}

/// Whether two depths are close enough to belong to one surface.
bool sameSurface(float a, float b, float maxRelativeJump) {
  const float nearer = std::min(a, b);
  return std::abs(a - b) <= maxRelativeJump * nearer;
}

cv::Vec3f normalized(const cv::Vec3f& v) {
  const float length = static_cast<float>(cv::norm(v));
  return length > 0.0f ? v / length : cv::Vec3f(0, 0, 0);
}

/// Normal of the surface through pixel (x, y) of the pointmap, from the differences to its neighbours
/// (central where both are usable, else one-sided). Oriented towards the camera: for image axes x right,
/// y down and depth forward, cross(d/dy, d/dx) points to -z.
cv::Vec3f estimateNormal(const cv::Mat& pointmap, int x, int y, float maxRelativeJump) {
  const cv::Vec3f centre = pointmap.at<cv::Vec3f>(y, x);
  auto usable = [&](int nx, int ny, cv::Vec3f& point) {
    if (nx < 0 || ny < 0 || nx >= pointmap.cols || ny >= pointmap.rows) return false;
    point = pointmap.at<cv::Vec3f>(ny, nx);
    return isValidPoint(point) && sameSurface(point[2], centre[2], maxRelativeJump);
  };
  auto difference = [&](int dx, int dy, cv::Vec3f& result) {
    cv::Vec3f before, after;
    const bool hasBefore = usable(x - dx, y - dy, before);
    const bool hasAfter = usable(x + dx, y + dy, after);
    if (hasBefore && hasAfter) {
      result = after - before;
    } else if (hasAfter) {
      result = after - centre;
    } else if (hasBefore) {
      result = centre - before;
    } else {
      return false;
    }
    return true;
  };
  cv::Vec3f alongX, alongY;
  if (difference(1, 0, alongX) && difference(0, 1, alongY)) {
    const cv::Vec3f normal = normalized(alongY.cross(alongX));
    if (normal != cv::Vec3f(0, 0, 0)) return normal;
  }
  // No surface to speak of around this point: it faces the camera that saw it.
  return normalized(-centre);
}

}  // namespace

PointCloud buildPointCloud(const cv::Mat& pointmap, const cv::Mat& normal, const cv::Mat& segLabels,
                           const cv::Mat& imageBgr, const PointCloudOptions& options) {
  if (pointmap.empty() || pointmap.type() != CV_32FC3) {
    throw std::invalid_argument("point cloud: the pointmap is " +
                                (pointmap.empty() ? std::string("empty") : sizeText(pointmap)) +
                                ", expected CV_32FC3");
  }
  checkMatrix(normal, "the normal map", CV_32FC3, pointmap);
  checkMatrix(segLabels, "the segmentation", CV_8UC1, pointmap);
  checkMatrix(imageBgr, "the image", CV_8UC3, pointmap);
  if (!(options.maxRelativeDepthJump >= 0.0f)) {
    throw std::invalid_argument("point cloud: maxRelativeDepthJump must be >= 0, not " +
                                std::to_string(options.maxRelativeDepthJump));
  }

  const int width = pointmap.cols;
  const int height = pointmap.rows;
  cv::Mat vertexIndex(height, width, CV_32SC1, cv::Scalar(-1));
  PointCloud cloud;
  for (int y = 0; y < height; ++y) {
    const auto* points = pointmap.ptr<cv::Vec3f>(y);
    const auto* labels = segLabels.empty() ? nullptr : segLabels.ptr<std::uint8_t>(y);
    auto* indices = vertexIndex.ptr<std::int32_t>(y);
    for (int x = 0; x < width; ++x) {
      if (labels != nullptr && labels[x] == 0) continue;
      if (!isValidPoint(points[x])) continue;
      indices[x] = static_cast<std::int32_t>(cloud.pixels.size());
      cloud.pixels.push_back(y * width + x);
    }
  }

  const std::size_t count = cloud.pixels.size();
  cloud.positions.resize(count * 3);
  cloud.normals.resize(count * 3);
  if (!imageBgr.empty()) cloud.colors.resize(count * 3);
  cv::parallel_for_(cv::Range(0, static_cast<int>(count)), [&](const cv::Range& range) {
    for (int i = range.start; i < range.end; ++i) {
      const int x = cloud.pixels[static_cast<std::size_t>(i)] % width;
      const int y = cloud.pixels[static_cast<std::size_t>(i)] / width;
      const auto at = static_cast<std::size_t>(i) * 3;
      const cv::Vec3f point = pointmap.at<cv::Vec3f>(y, x);
      std::copy(point.val, point.val + 3, cloud.positions.begin() + static_cast<std::ptrdiff_t>(at));

      cv::Vec3f n;
      bool fromMap = false;
      if (!normal.empty()) {
        n = normal.at<cv::Vec3f>(y, x);
        fromMap =
            std::isfinite(n[0]) && std::isfinite(n[1]) && std::isfinite(n[2]) && n != cv::Vec3f(0, 0, 0);
      }
      if (!fromMap) n = estimateNormal(pointmap, x, y, options.maxRelativeDepthJump);
      std::copy(n.val, n.val + 3, cloud.normals.begin() + static_cast<std::ptrdiff_t>(at));

      if (!imageBgr.empty()) {
        const cv::Vec3b bgr = imageBgr.at<cv::Vec3b>(y, x);
        cloud.colors[at] = bgr[2];
        cloud.colors[at + 1] = bgr[1];
        cloud.colors[at + 2] = bgr[0];
      }
    }
  });

  if (options.withFaces) {
    cloud.triangles.reserve(count * 6);  // at most two triangles per vertex
    for (int y = 0; y + 1 < height; ++y) {
      const auto* row = vertexIndex.ptr<std::int32_t>(y);
      const auto* below = vertexIndex.ptr<std::int32_t>(y + 1);
      const auto* points = pointmap.ptr<cv::Vec3f>(y);
      const auto* pointsBelow = pointmap.ptr<cv::Vec3f>(y + 1);
      for (int x = 0; x + 1 < width; ++x) {
        const std::int32_t a = row[x], b = row[x + 1], c = below[x], d = below[x + 1];
        if (a < 0 || b < 0 || c < 0 || d < 0) continue;
        const float depths[] = {points[x][2], points[x + 1][2], pointsBelow[x][2], pointsBelow[x + 1][2]};
        const auto [nearest, farthest] = std::minmax_element(std::begin(depths), std::end(depths));
        if (!sameSurface(*nearest, *farthest, options.maxRelativeDepthJump)) continue;
        // a b      counter-clockwise seen from the camera (y down): (a, c, b) and (b, c, d)
        // c d
        for (const std::int32_t index : {a, c, b, b, c, d})
          cloud.triangles.push_back(static_cast<std::uint32_t>(index));
      }
    }
  }
  return cloud;
}

PointCloud buildPointCloud(const FrameResult& result, const cv::Mat& imageBgr,
                           const PointCloudOptions& options) {
  if (result.pointmap.empty()) throw std::invalid_argument("point cloud: the frame has no pointmap result");
  return buildPointCloud(result.pointmap, result.normal, result.segLabels, imageBgr, options);
}

}  // namespace sapiens
