#include "cloud_preview.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace sapiens::studio {

int previewStride(std::size_t pointCount, std::size_t maxPoints) {
  if (maxPoints == 0) throw std::invalid_argument("previewStride: maxPoints must be > 0");
  return std::max(1, int(std::ceil(std::sqrt(double(pointCount) / double(maxPoints)))));
}

PointCloud previewCloud(const PointCloud& cloud, int imageWidth, std::size_t maxPoints) {
  const std::size_t count = cloud.vertexCount();
  if (count <= maxPoints) {
    PointCloud all;
    all.positions = cloud.positions;
    all.colors = cloud.colors;
    all.pixels = cloud.pixels;
    return all;
  }
  if (imageWidth <= 0 || cloud.pixels.size() != count)
    throw std::invalid_argument("previewCloud: the cloud has no pixel index for each vertex");
  // Every k-th row and column keeps about 1/k^2 of the points, but where the grid lands on a silhouette
  // it can keep more: step up until the count really fits.
  for (int stride = previewStride(count, maxPoints);; ++stride) {
    PointCloud thinned;
    for (std::size_t i = 0; i < count; ++i) {
      const int x = cloud.pixels[i] % imageWidth;
      const int y = cloud.pixels[i] / imageWidth;
      if (x % stride != 0 || y % stride != 0) continue;
      thinned.positions.insert(thinned.positions.end(), &cloud.positions[i * 3], &cloud.positions[i * 3] + 3);
      if (!cloud.colors.empty())
        thinned.colors.insert(thinned.colors.end(), &cloud.colors[i * 3], &cloud.colors[i * 3] + 3);
      thinned.pixels.push_back(cloud.pixels[i]);
    }
    if (thinned.vertexCount() <= maxPoints) return thinned;
  }
}

}  // namespace sapiens::studio
