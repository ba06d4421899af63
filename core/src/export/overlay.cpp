#include "sapiens/export/overlay.h"

#include "sapiens/export/track_colors.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

namespace sapiens {

namespace {

const cv::Scalar kBoxColor(0, 255, 0);  // BGR green

std::string describe(const cv::Mat& matrix) {
  if (matrix.empty()) return "empty";
  return std::to_string(matrix.cols) + "x" + std::to_string(matrix.rows) + " " +
         cv::typeToString(matrix.type());
}

/// The pixel a keypoint is drawn at: NumPy's round (half to even), as the official script; nothing for a
/// non-finite or out-of-range coordinate.
std::optional<cv::Point> roundedPoint(const std::array<double, 2>& point) {
  if (!std::isfinite(point[0]) || !std::isfinite(point[1])) return std::nullopt;
  constexpr double kLimit = 1 << 30;
  if (std::abs(point[0]) > kLimit || std::abs(point[1]) > kLimit) return std::nullopt;
  return cv::Point(static_cast<int>(std::nearbyint(point[0])), static_cast<int>(std::nearbyint(point[1])));
}

// "#id" on a tag in the track's colour, on the box's top edge at its left corner (inside the picture).
void drawTrackTag(cv::Mat& imageBgr, cv::Point corner, int trackId, const cv::Scalar& color,
                  int boxThickness) {
  const std::string text = "#" + std::to_string(trackId);
  const double scale = std::max(0.35, 0.2 * boxThickness);
  const int thickness = std::max(1, boxThickness / 2);
  int baseline = 0;
  const cv::Size size = cv::getTextSize(text, cv::FONT_HERSHEY_SIMPLEX, scale, thickness, &baseline);
  const int pad = std::max(1, boxThickness);
  cv::Rect tag(corner.x, corner.y - size.height - baseline - 2 * pad, size.width + 2 * pad,
               size.height + baseline + 2 * pad);
  tag.x = std::clamp(tag.x, 0, std::max(0, imageBgr.cols - tag.width));
  tag.y = std::clamp(tag.y, 0, std::max(0, imageBgr.rows - tag.height));
  cv::rectangle(imageBgr, tag, color, cv::FILLED, cv::LINE_8);
  const double luma = 0.114 * color[0] + 0.587 * color[1] + 0.299 * color[2];
  const cv::Scalar ink = luma > 140 ? cv::Scalar(0, 0, 0) : cv::Scalar(255, 255, 255);
  cv::putText(imageBgr, text, cv::Point(tag.x + pad, tag.y + pad + size.height), cv::FONT_HERSHEY_SIMPLEX,
              scale, ink, thickness, cv::LINE_AA);
}

}  // namespace

PoseDrawStyle poseDrawStyleFor(cv::Size imageSize, float keypointThreshold) {
  const double scale = std::max(imageSize.width, imageSize.height) / 1024.0;
  PoseDrawStyle style;
  style.keypointThreshold = keypointThreshold;
  style.radius = std::max(1, static_cast<int>(std::lround(8 * scale)));
  style.thickness = std::max(1, static_cast<int>(std::lround(8 * scale)));
  style.boxThickness = std::max(1, static_cast<int>(std::lround(2 * scale)));
  return style;
}

void drawPoses(cv::Mat& imageBgr, const std::vector<PoseInstance>& poses, const KeypointMetadata& metadata,
               const PoseDrawStyle& style) {
  if (imageBgr.empty() || imageBgr.type() != CV_8UC3) {
    throw std::invalid_argument("poses are drawn on a CV_8UC3 picture, not " + describe(imageBgr));
  }
  const cv::Rect inside(0, 0, imageBgr.cols, imageBgr.rows);
  for (std::size_t p = 0; p < poses.size(); ++p) {
    const PoseInstance& pose = poses[p];
    if (pose.keypoints.size() > metadata.size() || pose.scores.size() != pose.keypoints.size()) {
      throw std::invalid_argument("pose " + std::to_string(p) + " has " +
                                  std::to_string(pose.keypoints.size()) + " keypoints and " +
                                  std::to_string(pose.scores.size()) + " scores; the layout has " +
                                  std::to_string(metadata.size()) + " keypoints");
    }
    if (style.boxThickness > 0) {
      const auto corner1 = roundedPoint({pose.bbox.x1, pose.bbox.y1});
      const auto corner2 = roundedPoint({pose.bbox.x2, pose.bbox.y2});
      if (corner1 && corner2) {
        const cv::Scalar color = pose.trackId >= 0 ? toBgr(trackColor(pose.trackId)) : kBoxColor;
        cv::rectangle(imageBgr, *corner1, *corner2, color, style.boxThickness, cv::LINE_8);
        if (pose.trackId >= 0) drawTrackTag(imageBgr, *corner1, pose.trackId, color, style.boxThickness);
      }
    }

    // Where each keypoint is drawn, if it is: score >= threshold and inside the picture.
    std::vector<std::optional<cv::Point>> drawn(pose.keypoints.size());
    for (std::size_t k = 0; k < pose.keypoints.size(); ++k) {
      if (!(pose.scores[k] >= style.keypointThreshold)) continue;
      const auto point = roundedPoint(pose.keypoints[k]);
      if (point && inside.contains(*point)) drawn[k] = point;
    }
    for (std::size_t l = 0; l < metadata.skeletonLinks.size(); ++l) {
      const auto [from, to] = metadata.skeletonLinks[l];
      const auto a = static_cast<std::size_t>(from);
      const auto b = static_cast<std::size_t>(to);
      if (a >= drawn.size() || b >= drawn.size() || !drawn[a] || !drawn[b]) continue;
      cv::line(imageBgr, *drawn[a], *drawn[b], toBgr(metadata.linkColors[l]), std::max(1, style.thickness),
               cv::LINE_AA);
    }
    for (std::size_t k = 0; k < drawn.size(); ++k) {
      if (drawn[k])
        cv::circle(imageBgr, *drawn[k], style.radius, toBgr(metadata.keypointColors[k]), cv::FILLED,
                   cv::LINE_AA);
    }
  }
}

cv::Mat colorizeLabels(const cv::Mat& labels, const SegClasses& classes) {
  if (labels.empty() || labels.type() != CV_8UC1) {
    throw std::invalid_argument("segmentation labels must be CV_8UC1, not " + describe(labels));
  }
  // Labels without a class map to black, as the official zero-padded 256-entry palette does.
  cv::Mat lookup(1, 256, CV_8UC3, cv::Scalar(0, 0, 0));
  for (std::size_t c = 0; c < std::min<std::size_t>(classes.size(), 256); ++c) {
    const Rgb& rgb = classes.palette[c];
    lookup.at<cv::Vec3b>(0, static_cast<int>(c)) = cv::Vec3b(rgb[2], rgb[1], rgb[0]);
  }
  cv::Mat labels3;
  cv::cvtColor(labels, labels3, cv::COLOR_GRAY2BGR);
  cv::Mat colored;
  cv::LUT(labels3, lookup, colored);
  return colored;
}

namespace {

void requireOverlayOperands(const cv::Mat& imageBgr, const cv::Mat& labels) {
  if (imageBgr.empty() || imageBgr.type() != CV_8UC3 || imageBgr.size() != labels.size()) {
    throw std::invalid_argument("the segmentation overlay needs a CV_8UC3 picture of the labels' size (" +
                                describe(labels) + "), not " + describe(imageBgr));
  }
}

// Bands of rows: the colourised labels exist a band at a time, never at the picture's size.
constexpr int kBlendRows = 64;

}  // namespace

void blendSegmentationRows(const cv::Mat& imageBgr, const cv::Mat& labels, const SegClasses& classes,
                           double opacity, int firstRow, cv::Mat& out) {
  requireOverlayOperands(imageBgr, labels);
  if (out.type() != CV_8UC3 || out.cols != imageBgr.cols || firstRow < 0 ||
      firstRow + out.rows > imageBgr.rows)
    throw std::invalid_argument("rows " + std::to_string(firstRow) + " to " +
                                std::to_string(firstRow + out.rows) +
                                " of the overlay do not fit a picture of " + describe(imageBgr));
  for (int first = 0; first < out.rows; first += kBlendRows) {
    const cv::Range rows(firstRow + first, firstRow + std::min(out.rows, first + kBlendRows));
    cv::Mat target = out.rowRange(first, first + rows.size());
    cv::addWeighted(imageBgr.rowRange(rows), 1.0 - opacity, colorizeLabels(labels.rowRange(rows), classes),
                    opacity, 0.0, target);
  }
}

cv::Mat segmentationOverlay(const cv::Mat& imageBgr, const cv::Mat& labels, const SegClasses& classes,
                            double opacity) {
  requireOverlayOperands(imageBgr, labels);
  cv::Mat blended(imageBgr.size(), CV_8UC3);
  blendSegmentationRows(imageBgr, labels, classes, opacity, 0, blended);
  return blended;
}

}  // namespace sapiens
