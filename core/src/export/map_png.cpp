#include "sapiens/export/map_png.h"

#include "sapiens/export/image_file.h"
#include "sapiens/io/export_error.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace sapiens {

namespace {

// Bounds of the official depth visualisation (vis_pointmap.py): depths are shown between 0.1 and 250
// (metres, as the script assumes) at most.
constexpr float kNearestShown = 0.1f;
constexpr float kFarthestShown = 250.0f;
constexpr float kSmallestDepth = 1e-6f;
const cv::Vec3b kGrey(100, 100, 100);

std::string describe(const cv::Mat& matrix) {
  if (matrix.empty()) return "empty";
  return std::to_string(matrix.cols) + "x" + std::to_string(matrix.rows) + " " +
         cv::typeToString(matrix.type());
}

void checkMap(const cv::Mat& map, const char* what, const cv::Mat& foreground) {
  if (map.empty() || map.type() != CV_32FC3) {
    throw std::invalid_argument(std::string(what) + " must be CV_32FC3, not " + describe(map));
  }
  if (!foreground.empty() && (foreground.type() != CV_8UC1 || foreground.size() != map.size())) {
    throw std::invalid_argument(std::string("the foreground mask for the ") + what + " (" + describe(map) +
                                ") must be CV_8UC1 of the same size, not " + describe(foreground));
  }
}

/// uint8(trunc(value)) for value in [0, 255]; outside saturated, NaN -> 0.
std::uint8_t truncatedByte(float value) {
  if (!(value > 0.0f)) return 0;
  if (value >= 255.0f) return 255;
  return static_cast<std::uint8_t>(value);
}

/// The z of a CV_32FC3 pointmap, or a CV_32FC1 depth map as it is.
cv::Mat depthOf(const cv::Mat& depth, const cv::Mat& foreground) {
  if (depth.empty() || (depth.type() != CV_32FC1 && depth.type() != CV_32FC3)) {
    throw std::invalid_argument("depth must be CV_32FC1 depth or a CV_32FC3 pointmap, not " +
                                describe(depth));
  }
  if (!foreground.empty() && (foreground.type() != CV_8UC1 || foreground.size() != depth.size())) {
    throw std::invalid_argument("the foreground mask for the depth (" + describe(depth) +
                                ") must be CV_8UC1 of the same size, not " + describe(foreground));
  }
  if (depth.channels() == 1) return depth;
  cv::Mat z;
  cv::extractChannel(depth, z, 2);
  return z;
}

/// numpy.percentile(values, percent) with its default linear interpolation; reorders `values`.
double percentile(std::vector<float>& values, double percent) {
  const double position = percent / 100.0 * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(lower), values.end());
  const double a = values[lower];
  if (lower + 1 >= values.size()) return a;
  const double b = *std::min_element(values.begin() + static_cast<std::ptrdiff_t>(lower) + 1, values.end());
  // NumPy's _lerp: exact at both ends.
  return fraction >= 0.5 ? b - (b - a) * (1.0 - fraction) : a + (b - a) * fraction;
}

}  // namespace

cv::Mat normalMapImage(const cv::Mat& normal, const cv::Mat& foreground) {
  checkMap(normal, "normal map", foreground);
  cv::Mat image(normal.size(), CV_8UC3, cv::Scalar(0, 0, 0));
  for (int y = 0; y < normal.rows; ++y) {
    const auto* n = normal.ptr<cv::Vec3f>(y);
    const auto* mask = foreground.empty() ? nullptr : foreground.ptr<std::uint8_t>(y);
    auto* out = image.ptr<cv::Vec3b>(y);
    for (int x = 0; x < normal.cols; ++x) {
      if (mask != nullptr && mask[x] == 0) continue;
      if (n[x] == cv::Vec3f(0, 0, 0)) continue;  // no direction (invalid): drawn as background
      // R = x, G = y, B = z, in float32 as NumPy computes ((n + 1) / 2 * 255).
      for (int c = 0; c < 3; ++c) out[x][2 - c] = truncatedByte((n[x][c] + 1.0f) / 2.0f * 255.0f);
    }
  }
  return image;
}

cv::Mat albedoImage(const cv::Mat& albedo, const cv::Mat& foreground) {
  checkMap(albedo, "albedo map", foreground);
  cv::Mat image(albedo.size(), CV_8UC3, cv::Scalar(kGrey));
  for (int y = 0; y < albedo.rows; ++y) {
    const auto* a = albedo.ptr<cv::Vec3f>(y);
    const auto* mask = foreground.empty() ? nullptr : foreground.ptr<std::uint8_t>(y);
    auto* out = image.ptr<cv::Vec3b>(y);
    for (int x = 0; x < albedo.cols; ++x) {
      if (mask != nullptr && mask[x] == 0) continue;
      for (int c = 0; c < 3; ++c) out[x][2 - c] = truncatedByte(std::clamp(a[x][c], 0.0f, 1.0f) * 255.0f);
    }
  }
  return image;
}

void DepthRange::include(const DepthRange& other) {
  nearDepth = std::min(nearDepth, other.nearDepth);
  farDepth = std::max(farDepth, other.farDepth);
}

std::optional<DepthRange> foregroundDepthRange(const cv::Mat& depth, const cv::Mat& foreground) {
  const cv::Mat z = depthOf(depth, foreground);
  std::vector<float> values;
  values.reserve(z.total());
  for (int y = 0; y < z.rows; ++y) {
    const auto* d = z.ptr<float>(y);
    const auto* mask = foreground.empty() ? nullptr : foreground.ptr<std::uint8_t>(y);
    for (int x = 0; x < z.cols; ++x) {
      if ((mask == nullptr || mask[x] != 0) && std::isfinite(d[x])) values.push_back(d[x]);
    }
  }
  if (values.empty()) return std::nullopt;
  DepthRange range;
  range.nearDepth = static_cast<float>(percentile(values, 1.0));
  range.farDepth = static_cast<float>(percentile(values, 99.0));
  return range;
}

cv::Mat depthImage(const cv::Mat& depth, const cv::Mat& foreground, const std::optional<DepthRange>& range) {
  const cv::Mat z = depthOf(depth, foreground);
  cv::Mat image(z.size(), CV_8UC3, cv::Scalar(kGrey));
  if (!range) return image;

  const float nearest = std::min(1.0f / std::max(range->nearDepth, kSmallestDepth), 1.0f / kNearestShown);
  const float farthest = std::max(1.0f / kFarthestShown, 1.0f / std::max(range->farDepth, kSmallestDepth));
  cv::Mat index(z.size(), CV_8UC1, cv::Scalar(0));
  cv::Mat shown(z.size(), CV_8UC1, cv::Scalar(0));
  for (int y = 0; y < z.rows; ++y) {
    const auto* d = z.ptr<float>(y);
    const auto* mask = foreground.empty() ? nullptr : foreground.ptr<std::uint8_t>(y);
    auto* out = index.ptr<std::uint8_t>(y);
    auto* visible = shown.ptr<std::uint8_t>(y);
    for (int x = 0; x < z.cols; ++x) {
      if ((mask != nullptr && mask[x] == 0) || !std::isfinite(d[x])) continue;
      const float inverse = 1.0f / std::max(d[x], kSmallestDepth);
      float normalized = 0.0f;
      if (nearest > farthest) {
        normalized = std::clamp((inverse - farthest) / (nearest - farthest), 0.0f, 1.0f);
      } else {
        normalized = inverse >= nearest ? 1.0f : 0.0f;  // all foreground at one depth
      }
      // matplotlib's 256-entry lookup: index = int(v * 256), with v = 1 in the last entry.
      out[x] = static_cast<std::uint8_t>(std::min(static_cast<int>(normalized * 256.0f), 255));
      visible[x] = 255;
    }
  }
  cv::Mat colored;
  cv::applyColorMap(index, colored, cv::COLORMAP_TURBO);
  colored.copyTo(image, shown);
  return image;
}

void writeNormalPng(const std::string& path, const cv::Mat& normal, const cv::Mat& foreground,
                    const std::string& note) {
  cv::Mat image;
  try {
    image = normalMapImage(normal, foreground);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  writeImageFile(path, image, {}, note);
}

void writeAlbedoPng(const std::string& path, const cv::Mat& albedo, const cv::Mat& foreground,
                    const std::string& note) {
  cv::Mat image;
  try {
    image = albedoImage(albedo, foreground);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  writeImageFile(path, image, {}, note);
}

void writeDepthPng(const std::string& path, const cv::Mat& depth, const cv::Mat& foreground,
                   const std::optional<DepthRange>& range, const std::string& note) {
  cv::Mat image;
  try {
    image = depthImage(depth, foreground, range ? range : foregroundDepthRange(depth, foreground));
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  writeImageFile(path, image, {}, note);
}

}  // namespace sapiens
