#pragma once
// One task model on one picture: the official pre-processing, the forward pass and the official
// post-processing, with results in the picture's own pixel grid. Input sizes are parameters (the
// released models use the 768 x 1024 default).

#include "pipeline/pose_decode.h"
#include "pipeline/postprocess.h"
#include "pipeline/preprocess.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace sapiens {

class Model;

struct PoseOptions {
  InputSize inputSize;
  bool flipTest = true;                   ///< on in every released config
  std::vector<std::int64_t> flipIndices;  ///< empty: defaultFlipIndices()
  DarkRefinement refinement = DarkRefinement::Guarded;
};

/// Top-down pose for every box (all crops, and their mirror images for the flip test, in one batch).
/// No boxes: the whole picture [0, 0, W - 1, H - 1], as the official demo does when it finds nobody.
/// Throws std::invalid_argument when the model is not a pose model.
std::vector<PoseInstance> estimatePoses(const Model& model, const cv::Mat& bgr,
                                        std::vector<BoundingBox> boxes, const PoseOptions& options = {});

/// Stretch to the input, forward, labels at the picture's size.
SegResult segmentImage(const Model& model, const cv::Mat& bgr, InputSize inputSize = {},
                       bool withProbabilities = false);

/// Letterbox, forward, unit normals at the picture's size (CV_32FC3).
cv::Mat estimateNormals(const Model& model, const cv::Mat& bgr, InputSize inputSize = {});

/// Letterbox, forward, albedo in [0, 1] at the picture's size (CV_32FC3, RGB).
cv::Mat estimateAlbedo(const Model& model, const cv::Mat& bgr, InputSize inputSize = {});

struct PointmapEstimate {
  cv::Mat metric;  ///< CV_32FC3 (X, Y, Z) = canonical / scale
  float scale = 0.0f;
  std::optional<Intrinsics> intrinsics;  ///< see intrinsicsFromScale; none for a scale <= 0
};

/// Letterbox, forward, metric pointmap at the picture's size and the implied intrinsics.
PointmapEstimate estimatePointmap(const Model& model, const cv::Mat& bgr, InputSize inputSize = {});

/// Stretch to the input (enlarging bilinearly), forward, alpha and premultiplied foreground at the
/// picture's size.
Matte estimateMatte(const Model& model, const cv::Mat& bgr, InputSize inputSize = {});

struct AnalysisOptions {
  InputSize inputSize;  ///< for every task except pose, which uses pose.inputSize
  PoseOptions pose;
  std::vector<BoundingBox> personBoxes;  ///< pose only; empty = whole picture
};

/// Runs `model` (its task decides what) on `bgr` and stores the result in `frame` (sized to the picture),
/// with the task's wall time (pre-processing, forward pass, post-processing) in frame.inferenceMs.
/// Throws std::invalid_argument for a backbone-only model.
void analyzeImage(const Model& model, const cv::Mat& bgr, FrameResult& frame,
                  const AnalysisOptions& options = {});

/// analyzeImage for several pictures with one forward pass: the pictures (for pose, every person crop of
/// every picture) are stacked on the batch dimension. frames[i] receives images[i]'s results, equal to
/// analyzeImage's up to the float rounding of larger matrix products; its inferenceMs is the batch's
/// wall time divided by the number of pictures. personBoxes: one list per picture (pose only; empty =
/// the whole picture); options.personBoxes is ignored.
void analyzeImages(const Model& model, const std::vector<cv::Mat>& images,
                   const std::vector<FrameResult*>& frames, const AnalysisOptions& options,
                   const std::vector<std::vector<BoundingBox>>& personBoxes = {});

}  // namespace sapiens
