#pragma once
// What running the models on one picture produces, as plain data on the CPU, in the picture's own pixel
// grid. Produced by the pipeline, consumed by views, exporters and tests alike.

#include "sapiens/model/task.h"

#include <opencv2/core/mat.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sapiens {

struct BoundingBox {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;  ///< image pixels, inclusive corners as the official demo uses
  float width() const { return x2 - x1; }
  float height() const { return y2 - y1; }
  /// Every corner a finite number (JSON has no infinity: one would be written back as null).
  bool isFinite() const {
    return std::isfinite(x1) && std::isfinite(y1) && std::isfinite(x2) && std::isfinite(y2);
  }
  /// Finite, with x2 > x1 and y2 > y1.
  bool isProper() const { return isFinite() && x2 > x1 && y2 > y1; }
};

/// One person from the top-down pose model.
struct PoseInstance {
  BoundingBox bbox;
  std::string bboxSource;                        ///< "user", "segmentation", "detector", "full-image"
  std::vector<std::array<double, 2>> keypoints;  ///< 308 (x, y) in image pixels
  std::vector<float> scores;                     ///< raw heatmap maxima, as the official decoder reports
  /// Per keypoint (x, y, z) in metres in the pointmap's camera frame (x right, y down, z forward: the PLY's
  /// frame), lifted by liftKeypoints; NaN where the pointmap has no value there. Empty without a pointmap.
  std::vector<std::array<double, 3>> keypoints3d;
  int trackId = -1;  ///< the person's identity across a video's frames (PersonTracker); -1: not tracked
};

/// Pinhole intrinsics implied by the pointmap model (image pixels).
struct Intrinsics {
  double fx = 0, fy = 0, cx = 0, cy = 0;
};

struct FrameResult {
  int width = 0;  ///< image size all maps below are in
  int height = 0;

  std::vector<PoseInstance> poses;  ///< empty when pose did not run
  cv::Mat segLabels;   ///< CV_8UC1 class index 0..28 (0 = background); empty when seg did not run
  cv::Mat normal;      ///< CV_32FC3 unit vectors (x, y, z), camera frame
  cv::Mat albedo;      ///< CV_32FC3 RGB in [0, 1]
  cv::Mat pointmap;    ///< CV_32FC3 metric (X, Y, Z) = canonical / scale
  cv::Mat alpha;       ///< CV_32FC1 in [0, 1]: how much of each pixel is the person (matting)
  cv::Mat foreground;  ///< CV_32FC3 RGB in [0, 1] premultiplied by alpha (matting; empty: alpha-only head)
  std::optional<float> pointmapScale;
  std::optional<Intrinsics> intrinsics;

  std::map<Task, double> inferenceMs;  ///< model time per task

  /// Tasks that ran on this picture and failed, with why; their maps are absent, the others stand.
  std::map<Task, std::string> taskErrors;
  /// Tasks whose raw output held NaN or infinite values (their pixels are left invalid): how many, and a
  /// sentence that says so.
  std::map<Task, std::int64_t> nonFiniteValues;
  std::map<Task, std::string> warnings;

  bool has(Task task) const;
  /// Memory held by the maps and poses.
  std::size_t bytes() const;
};

/// Tasks' failures as one clause, "seg: why; pose: why" (in task order), for a message that every task
/// failed.
std::string taskErrorsText(const std::map<Task, std::string>& taskErrors);

}  // namespace sapiens
