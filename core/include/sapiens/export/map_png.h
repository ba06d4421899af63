#pragma once
// Dense maps as 8-bit BGR pictures, computed as the official visualisation scripts do (vis_normal,
// vis_albedo, vis_pointmap), and written as PNG.
//
// `foreground` (optional everywhere): CV_8UC1, non-zero = foreground; a segmentation label map can be
// passed directly (labels > 0 are the person). Empty = every pixel is foreground.

#include <opencv2/core/mat.hpp>

#include <optional>
#include <string>

namespace sapiens {

/// normal (CV_32FC3 x, y, z) -> uint8(trunc((n + 1) / 2 * 255)) per channel, saturated; shown with R = x,
/// G = y, B = z; background and invalid (zero) normals black.
cv::Mat normalMapImage(const cv::Mat& normal, const cv::Mat& foreground = cv::Mat());

/// albedo (CV_32FC3 R, G, B) -> uint8(trunc(clamp(a, 0, 1) * 255)); background grey (100, 100, 100).
cv::Mat albedoImage(const cv::Mat& albedo, const cv::Mat& foreground = cv::Mat());

/// Depth bounds of the colour map: the 1st and 99th percentiles (NumPy's linear interpolation) of the
/// finite foreground depths of one frame, or over a video the smallest near and largest far bound.
struct DepthRange {
  float nearDepth = 0;
  float farDepth = 0;
  /// Widens this range to cover `other` as well.
  void include(const DepthRange& other);
};

/// `depth` is CV_32FC1 depth or a CV_32FC3 pointmap (its z). Empty when no finite foreground depth.
std::optional<DepthRange> foregroundDepthRange(const cv::Mat& depth, const cv::Mat& foreground = cv::Mat());

/// Inverse depth 1 / max(z, 1e-6) normalised between max(1/250, 1/far) and min(1/near, 1/0.1), clipped to
/// [0, 1] and coloured with the turbo colour map (near = red, far = blue); background and non-finite depths
/// grey (100, 100, 100). With no range (nothing in the foreground) the picture is all grey.
cv::Mat depthImage(const cv::Mat& depth, const cv::Mat& foreground, const std::optional<DepthRange>& range);

/// The pictures above, written through writeImageFile (format from the extension).
/// `note`: see writeImageFile.
void writeNormalPng(const std::string& path, const cv::Mat& normal, const cv::Mat& foreground = cv::Mat(),
                    const std::string& note = {});
void writeAlbedoPng(const std::string& path, const cv::Mat& albedo, const cv::Mat& foreground = cv::Mat(),
                    const std::string& note = {});
/// With no `range`, the frame's own foregroundDepthRange.
void writeDepthPng(const std::string& path, const cv::Mat& depth, const cv::Mat& foreground = cv::Mat(),
                   const std::optional<DepthRange>& range = std::nullopt, const std::string& note = {});

}  // namespace sapiens
