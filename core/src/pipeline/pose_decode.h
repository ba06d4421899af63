#pragma once
// Keypoints from pose heatmaps: the official UDP decoder (argmax, then one DARK Newton step on the
// log of the blurred heatmap), with an optional guard against its ill-conditioned steps.

#include "pipeline/preprocess.h"

#include <ATen/core/Tensor.h>

#include <array>
#include <vector>

namespace sapiens {

enum class DarkRefinement {
  /// The official unguarded Newton step, bit for bit (float32 finite differences, float64 2 x 2
  /// inverse, result rounded to float32). Flat or noisy heatmaps give near-singular or indefinite
  /// Hessians whose steps fly off by pixels or land outside the crop; keypoints with a score <= 0 keep
  /// the official (-1, -1) start and are "refined" from neighbours read across channel boundaries, as
  /// the official flat-array indexing does.
  Official,
  /// The official step where it is well-conditioned, the argmax cell where it is not. Along each
  /// eigenvector of the Hessian, the step is determined when the curvature is at least
  /// kDarkMinCurvature in magnitude, or when the step component stays below kDarkNegligibleStepCells
  /// (flat, clipped directions without slope). Both determined: the official step. One curved and
  /// one undetermined: only the component along the curved direction (the argmax is kept along the
  /// other; clipping of the log-heatmap at 1e-3 flips such directions under tiny input changes).
  /// Neither: the argmax. In every case the step must be at most kDarkMaxStepCells long and end at
  /// most kDarkMaxOutsideCells outside the heatmap (border peaks legitimately step a little outside:
  /// the official edge padding and zero-padded blur bias them), else the argmax is kept. Definiteness
  /// is not required: the official step towards a saddle is reproducible when well-conditioned.
  /// Keypoints with a score <= 0 stay at (-1, -1) unrefined.
  Guarded,
};

/// How a keypoint's location was obtained.
enum class KeypointRefinement : unsigned char {
  None,     ///< the argmax cell (or (-1, -1) for a score <= 0 in the guarded mode)
  Newton,   ///< argmax - H^-1 g, the official step
  Partial,  ///< the Newton step along the one well-curved eigen-direction only
};

/// Smallest |eigenvalue| of the log-heatmap Hessian (per cell squared) that determines a step. Released
/// models' peaks (sigma 6 cells, blurred by 2) curve by about -1 / 40; 1e-3 leaves room for peaks five
/// times as wide.
inline constexpr double kDarkMinCurvature = 1e-3;
/// Step component (cells) along a flatter direction that is still accepted.
inline constexpr double kDarkNegligibleStepCells = 0.05;
/// Longest accepted Newton step in heatmap cells (the fixtures' well-conditioned steps reach 3.5).
inline constexpr double kDarkMaxStepCells = 4.0;
/// How far outside the outermost heatmap cells an accepted step may end (the fixtures' well-conditioned
/// border steps reach 1.27 cells).
inline constexpr double kDarkMaxOutsideCells = 1.5;

struct DecodedKeypoints {
  std::vector<std::array<double, 2>> inputPixels;  ///< (x, y) in network input pixels
  std::vector<float> scores;                       ///< maxima of the (unblurred) heatmaps
  std::vector<KeypointRefinement> refinement;
};

/// Decodes (K, h, w) heatmaps (any device; float32 on the host for the decode). Input pixel
/// = heatmap cell * input_size / (heatmap_size - 1). `blurKernel` is the DARK Gaussian kernel (official:
/// 11, sigma from OpenCV's rule). Throws std::invalid_argument for another shape or an even kernel.
DecodedKeypoints decodeUdpHeatmaps(const at::Tensor& heatmaps, InputSize inputSize,
                                   DarkRefinement refinement = DarkRefinement::Guarded, int blurKernel = 11);

}  // namespace sapiens
