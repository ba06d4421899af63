#pragma once
// The vertices (and optionally a grid mesh) that a pointmap describes: what the PLY exporter writes and
// what the 3-D view shows. No decorations: every vertex is a pixel of the picture.

#include <opencv2/core/mat.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sapiens {

struct FrameResult;

struct PointCloudOptions {
  /// Two triangles per 2x2 block of neighbouring vertices.
  bool withFaces = false;
  /// A block is meshed, and a neighbour used to estimate a normal, only when the depths differ by at most
  /// this fraction of the smaller one: (max z - min z) / min z <= maxRelativeDepthJump. Breaks the mesh at
  /// silhouettes (a person 2 m in front of a wall) while keeping slanted surfaces whole.
  float maxRelativeDepthJump = 0.05f;
};

struct PointCloud {
  std::vector<float> positions;          ///< x y z per vertex, the pointmap's (metric) camera frame
  std::vector<float> normals;            ///< nx ny nz per vertex
  std::vector<std::uint8_t> colors;      ///< red green blue per vertex; empty when no image was given
  std::vector<std::uint32_t> triangles;  ///< three vertex indices per triangle, counter-clockwise seen
                                         ///< from the camera; empty unless PointCloudOptions::withFaces
  std::vector<std::int32_t> pixels;      ///< y * width + x of each vertex's pixel

  std::size_t vertexCount() const { return positions.size() / 3; }
  std::size_t triangleCount() const { return triangles.size() / 3; }
};

/// Vertices from `pointmap` (CV_32FC3 X, Y, Z; pinhole frame, x right, y down, z forward). A pixel
/// becomes a vertex when its point is finite with z > 0 and, when `segLabels` (CV_8UC1) is given, its
/// label is > 0 (foreground). Normals come from `normal` (CV_32FC3) where it is given, finite and not zero
/// (invalid), else from the cross product of the neighbouring points' differences, oriented towards the
/// camera (a pixel without usable neighbours gets the direction back to the camera). Colours come from
/// `imageBgr` (CV_8UC3) when given. Every non-empty matrix must have the pointmap's size; throws
/// std::invalid_argument naming the matrix and both sizes otherwise.
PointCloud buildPointCloud(const cv::Mat& pointmap, const cv::Mat& normal, const cv::Mat& segLabels,
                           const cv::Mat& imageBgr, const PointCloudOptions& options = {});

/// The same from a frame's results (its pointmap, normal map and segmentation); throws
/// std::invalid_argument when the frame has no pointmap.
PointCloud buildPointCloud(const FrameResult& result, const cv::Mat& imageBgr,
                           const PointCloudOptions& options = {});

}  // namespace sapiens
