#include "pipeline/pose_decode.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace sapiens {
namespace {

struct Peak {
  std::int64_t index = 0;
  float value = 0.0f;
};

/// Flat argmax in row-major order (first maximum; a NaN counts as the maximum, as numpy's argmax) and
/// the maximum itself (NaN when any value is NaN, as numpy's amax).
Peak findPeak(const float* data, std::int64_t count) {
  Peak peak{0, data[0]};
  if (std::isnan(peak.value)) return peak;
  for (std::int64_t i = 1; i < count; ++i) {
    if (std::isnan(data[i])) return Peak{i, data[i]};
    if (data[i] > peak.value) peak = Peak{i, data[i]};
  }
  return peak;
}

/// np.max of a channel (NaN when any value is NaN).
float channelMax(const cv::Mat& map) {
  float best = map.at<float>(0, 0);
  for (int y = 0; y < map.rows; ++y) {
    const float* row = map.ptr<float>(y);
    for (int x = 0; x < map.cols; ++x) {
      if (std::isnan(row[x])) return row[x];
      if (row[x] > best) best = row[x];
    }
  }
  return best;
}

float fromBits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// Natural log of a float32 exactly as numpy computes np.log on float32 arrays on x86-64 CPUs with
/// AVX2/FMA3 or AVX-512 (its own vector kernel, up to ~4 ulp from the correctly rounded value, which
/// glibc's logf gives): mantissa in [sqrt(1/2), sqrt(2)), a rational P5/Q5 approximation of log(1 + y)
/// evaluated with fused multiply-adds, plus exponent * ln 2. Bit-exact DARK parity needs it.
float numpyLogf(float x) {
  if (std::isnan(x)) return x;
  if (x < 0.0f) return -std::numeric_limits<float>::quiet_NaN();
  if (x == 0.0f) return -std::numeric_limits<float>::infinity();
  if (std::isinf(x)) return x;
  static const float p[6] = {fromBits(0x00000000), fromBits(0x3F800000), fromBits(0x4007361C),
                             fromBits(0x3FBD70A9), fromBits(0x3EC30333), fromBits(0x3CD42BCD)};
  static const float q[6] = {fromBits(0x3F800000), fromBits(0x4027361C), fromBits(0x401CFE0D),
                             fromBits(0x3F7C8AE4), fromBits(0x3E1E5BF3), fromBits(0x3BC083DF)};
  const float sqrtHalf = fromBits(0x3F3504F3);
  const float ln2 = fromBits(0x3F317218);
  int extraExponent = 0;
  if (x < std::numeric_limits<float>::min()) {  // subnormal: scaled by 2^100 first
    x *= fromBits(0x71800000);
    extraExponent = -100;
  }
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  float exponent = static_cast<float>(static_cast<int>(bits >> 23) - 126 + extraExponent);
  float mantissa = fromBits((bits & 0x007FFFFFu) | 0x3F000000u);  // [0.5, 1)
  if (mantissa <= sqrtHalf) {
    mantissa = mantissa + mantissa;
    exponent = exponent - 1.0f;
  }
  const float y = mantissa - 1.0f;
  float numerator = std::fma(p[5], y, p[4]);
  float denominator = std::fma(q[5], y, q[4]);
  for (int i = 3; i >= 0; --i) {
    numerator = std::fma(numerator, y, p[i]);
    denominator = std::fma(denominator, y, q[i]);
  }
  return std::fma(exponent, ln2, numerator / denominator);
}

/// The official DARK modulation of every channel as one flat (K, h + 2, w + 2) array: blur on a
/// zero-padded copy, rescale to the original maximum, clip to [1e-3, 50], natural log, pad by one
/// edge-replicated pixel. The blur and the maximum need whole channels, but the finite differences read
/// only the 3 x 3 cells around each channel's start location and, for starts at (-1, -1), corners of
/// the neighbouring channel; only those blurred values are kept, so a full-size decode (308 x 256 x 192)
/// needs no channel-sized memory beyond one scratch buffer per thread.
class LogModulatedMaps {
 public:
  /// `centres`: per channel, the (x, y) cell around which values will be read.
  LogModulatedMaps(const float* heatmaps, const std::vector<std::array<int, 2>>& centres, int height,
                   int width, int kernel)
      : height_(height), width_(width), kept_(centres.size()) {
    const std::int64_t plane = static_cast<std::int64_t>(height) * width;
    cv::parallel_for_(cv::Range(0, static_cast<int>(centres.size())), [&](const cv::Range& range) {
      const int border = (kernel - 1) / 2;
      cv::Mat padded(height + 2 * border, width + 2 * border, CV_32F);
      cv::Mat blurred;
      for (int k = range.start; k < range.end; ++k) {
        const cv::Mat source(height, width, CV_32F, const_cast<float*>(heatmaps + k * plane));
        padded.setTo(0.0f);
        source.copyTo(padded(cv::Rect(border, border, width, height)));
        cv::GaussianBlur(padded, blurred, cv::Size(kernel, kernel), 0);
        const cv::Mat inner = blurred(cv::Rect(border, border, width, height));
        Kept& kept = kept_[static_cast<std::size_t>(k)];
        kept.factor = channelMax(source) / channelMax(inner);
        kept.centre = centres[static_cast<std::size_t>(k)];
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            kept.patch[dy + 1][dx + 1] =
                inner.at<float>(clampY(kept.centre[1] + dy), clampX(kept.centre[0] + dx));
          }
        }
        kept.corners = {inner.at<float>(0, 0), inner.at<float>(height - 1, 0),
                        inner.at<float>(height - 1, width - 1)};
      }
    });
  }

  /// The entry at `flat` of the official flattened array; negative indices count from the end, as
  /// Python's do.
  float at(std::int64_t flat) const {
    const std::int64_t paddedWidth = width_ + 2;
    const std::int64_t paddedPlane = (height_ + 2) * paddedWidth;
    if (flat < 0) flat += static_cast<std::int64_t>(kept_.size()) * paddedPlane;
    const Kept& kept = kept_[static_cast<std::size_t>(flat / paddedPlane)];
    const std::int64_t rest = flat % paddedPlane;
    const int y = clampY(static_cast<int>(rest / paddedWidth) - 1);
    const int x = clampX(static_cast<int>(rest % paddedWidth) - 1);
    float blurred = 0.0f;
    if (!findInPatch(kept, x, y, blurred) && !findCorner(kept, x, y, blurred)) {
      throw std::logic_error(fmt::format("DARK decode read cell ({}, {}) that was not kept", x, y));
    }
    float v = blurred * kept.factor;
    v = v < 1e-3f ? 1e-3f : (v > 50.0f ? 50.0f : v);  // NaN passes through, as np.clip
    return numpyLogf(v);
  }

 private:
  struct Kept {
    float factor = 1.0f;
    std::array<int, 2> centre{};
    float patch[3][3] = {};          ///< blurred values at centre + (dx, dy), clamped to the map
    std::array<float, 3> corners{};  ///< top-left, bottom-left, bottom-right
  };

  int clampY(int y) const { return std::clamp(y, 0, height_ - 1); }
  int clampX(int x) const { return std::clamp(x, 0, width_ - 1); }

  bool findInPatch(const Kept& kept, int x, int y, float& value) const {
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if (clampY(kept.centre[1] + dy) == y && clampX(kept.centre[0] + dx) == x) {
          value = kept.patch[dy + 1][dx + 1];
          return true;
        }
      }
    }
    return false;
  }

  bool findCorner(const Kept& kept, int x, int y, float& value) const {
    const int corner = x == 0 && y == 0                      ? 0
                       : x == 0 && y == height_ - 1          ? 1
                       : x == width_ - 1 && y == height_ - 1 ? 2
                                                             : -1;
    if (corner < 0) return false;
    value = kept.corners[static_cast<std::size_t>(corner)];
    return true;
  }

  int height_;
  int width_;
  std::vector<Kept> kept_;
};

/// numpy's inv of a 2 x 2 float64 matrix through LAPACK gesv: LU with partial pivoting (the multiplier
/// and the solves use reciprocals of the pivots, as OpenBLAS does), then solves against the identity.
/// Returns false for an exactly singular matrix (numpy raises there).
bool invert2x2(const double m[2][2], double inverse[2][2]) {
  double a = m[0][0], b = m[0][1], c = m[1][0], d = m[1][1];
  const bool swapped = std::fabs(c) > std::fabs(a);
  if (swapped) {
    std::swap(a, c);
    std::swap(b, d);
  }
  if (a == 0.0) return false;
  const double reciprocalA = 1.0 / a;
  const double lower = c * reciprocalA;
  const double upper = d - lower * b;
  if (upper == 0.0) return false;
  const double reciprocalU = 1.0 / upper;
  for (int column = 0; column < 2; ++column) {
    double y0 = column == 0 ? 1.0 : 0.0;
    double y1 = column == 0 ? 0.0 : 1.0;
    if (swapped) std::swap(y0, y1);
    y1 -= lower * y0;
    const double x1 = y1 * reciprocalU;
    const double x0 = (y0 - b * x1) * reciprocalA;
    inverse[0][column] = x0;
    inverse[1][column] = x1;
  }
  return true;
}

/// double -> float that the optimiser cannot skip: GCC 12 at -O3 was seen to vectorise
/// `(double)(float)x` back into `x`, losing the official float32 rounding of the keypoints.
float roundToFloat(double value) {
  volatile float rounded = static_cast<float>(value);
  return rounded;
}

/// Finite differences of the log-modulated heatmap at a peak, float32 as the official code has them.
struct LogDerivatives {
  float dx = 0, dy = 0, dxx = 0, dxy = 0, dyy = 0;

  /// The Hessian with the official eps on the diagonal, promoted to float64 as numpy does.
  void hessian(double h[2][2]) const {
    const double eps = static_cast<double>(FLT_EPSILON);
    h[0][0] = static_cast<double>(dxx) + eps;
    h[0][1] = h[1][0] = static_cast<double>(dxy);
    h[1][1] = static_cast<double>(dyy) + eps;
  }
};

/// The official Newton step (subtracted from the location): the LU inverse of the Hessian times the
/// gradient. NaN when the Hessian is exactly singular (numpy raises there).
std::array<double, 2> officialStep(const LogDerivatives& d) {
  double h[2][2];
  d.hessian(h);
  double inverse[2][2];
  if (!invert2x2(h, inverse)) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan};
  }
  const double g[2] = {static_cast<double>(d.dx), static_cast<double>(d.dy)};
  return {inverse[0][0] * g[0] + inverse[0][1] * g[1], inverse[1][0] * g[0] + inverse[1][1] * g[1]};
}

/// The Hessian in its eigenbasis, with the gradient in the same basis.
struct EigenStep {
  double direction[2][2] = {{1, 0}, {0, 1}};  ///< unit eigenvectors
  double curvature[2] = {0, 0};               ///< their eigenvalues
  double slope[2] = {0, 0};                   ///< gradient components along them

  explicit EigenStep(const LogDerivatives& d) {
    double h[2][2];
    d.hessian(h);
    const double angle = 0.5 * std::atan2(2.0 * h[0][1], h[0][0] - h[1][1]);
    const double c = std::cos(angle), s = std::sin(angle);
    const double vectors[2][2] = {{c, s}, {-s, c}};
    for (int i = 0; i < 2; ++i) {
      const double* v = vectors[i];
      direction[i][0] = v[0];
      direction[i][1] = v[1];
      curvature[i] = v[0] * (h[0][0] * v[0] + h[0][1] * v[1]) + v[1] * (h[1][0] * v[0] + h[1][1] * v[1]);
      slope[i] = v[0] * static_cast<double>(d.dx) + v[1] * static_cast<double>(d.dy);
    }
  }

  /// A direction determines its step component when it is clearly curved, or when its slope is so small
  /// that the component stays negligible (flat, clipped parts of the log-heatmap).
  bool determined(int i) const {
    return std::fabs(curvature[i]) >= kDarkMinCurvature ||
           std::fabs(slope[i]) <= kDarkNegligibleStepCells * std::fabs(curvature[i]);
  }

  /// The Newton step restricted to the curved direction `i`.
  std::array<double, 2> stepAlong(int i) const {
    const double length = slope[i] / curvature[i];
    return {length * direction[i][0], length * direction[i][1]};
  }
};

/// Where the guarded decode puts a keypoint that starts at `location`, and how.
KeypointRefinement guardedRefinement(const LogDerivatives& d, const float location[2], int width, int height,
                                     float refined[2]) {
  const EigenStep eigen(d);
  std::array<double, 2> step{};
  KeypointRefinement kind = KeypointRefinement::Newton;
  if (eigen.determined(0) && eigen.determined(1)) {
    step = officialStep(d);
  } else if (eigen.determined(0) != eigen.determined(1)) {
    const int curved = eigen.determined(0) ? 0 : 1;
    if (std::fabs(eigen.curvature[curved]) < kDarkMinCurvature) return KeypointRefinement::None;
    step = eigen.stepAlong(curved);
    kind = KeypointRefinement::Partial;
  } else {
    return KeypointRefinement::None;
  }
  refined[0] = roundToFloat(location[0] - step[0]);
  refined[1] = roundToFloat(location[1] - step[1]);
  const double length = std::hypot(step[0], step[1]);
  const bool inside = refined[0] >= -kDarkMaxOutsideCells && refined[0] <= width - 1 + kDarkMaxOutsideCells &&
                      refined[1] >= -kDarkMaxOutsideCells && refined[1] <= height - 1 + kDarkMaxOutsideCells;
  return length <= kDarkMaxStepCells && inside ? kind : KeypointRefinement::None;
}

}  // namespace

DecodedKeypoints decodeUdpHeatmaps(const at::Tensor& heatmaps, InputSize inputSize, DarkRefinement refinement,
                                   int blurKernel) {
  if (heatmaps.dim() != 3 || heatmaps.size(0) < 1 || heatmaps.size(1) < 2 || heatmaps.size(2) < 2) {
    throw std::invalid_argument(
        fmt::format("decodeUdpHeatmaps: expected heatmaps (K, h, w) with h, w >= 2, got ({})",
                    fmt::join(heatmaps.sizes(), ", ")));
  }
  if (blurKernel < 1 || blurKernel % 2 == 0) {
    throw std::invalid_argument(
        fmt::format("decodeUdpHeatmaps: the blur kernel must be odd, got {}", blurKernel));
  }
  const at::Tensor maps = heatmaps.detach().to(at::kCPU, at::kFloat).contiguous();
  const auto channels = maps.size(0);
  const int height = static_cast<int>(maps.size(1));
  const int width = static_cast<int>(maps.size(2));
  const std::int64_t plane = static_cast<std::int64_t>(height) * width;
  const float* data = maps.data_ptr<float>();

  std::vector<Peak> peaks(static_cast<std::size_t>(channels));
  std::vector<std::array<int, 2>> centres(peaks.size());
  for (std::int64_t k = 0; k < channels; ++k) {
    const auto slot = static_cast<std::size_t>(k);
    peaks[slot] = findPeak(data + k * plane, plane);
    centres[slot] = {static_cast<int>(peaks[slot].index % width),
                     static_cast<int>(peaks[slot].index / width)};
  }
  // The official decoder indexes the modulated maps as one flat array: starts at (-1, -1) read across
  // channel boundaries.
  const LogModulatedMaps logMaps(data, centres, height, width, blurKernel);
  const std::int64_t paddedPlane = static_cast<std::int64_t>(height + 2) * (width + 2);

  DecodedKeypoints result;
  result.inputPixels.resize(static_cast<std::size_t>(channels));
  result.scores.resize(static_cast<std::size_t>(channels));
  result.refinement.assign(static_cast<std::size_t>(channels), KeypointRefinement::None);
  const std::int64_t rowStride = width + 2;
  for (std::int64_t k = 0; k < channels; ++k) {
    const auto slot = static_cast<std::size_t>(k);
    const Peak& peak = peaks[slot];
    result.scores[slot] = peak.value;
    // float32, as the official locations array; the Newton update is computed in float64 and stored back.
    float location[2] = {static_cast<float>(centres[slot][0]), static_cast<float>(centres[slot][1])};
    const bool valid = !(peak.value <= 0.0f);
    if (!valid) location[0] = location[1] = -1.0f;

    if (valid || refinement == DarkRefinement::Official) {
      const std::int64_t index = static_cast<std::int64_t>(location[0]) + 1 +
                                 (static_cast<std::int64_t>(location[1]) + 1) * rowStride + k * paddedPlane;
      const float i = logMaps.at(index);
      const float ix1 = logMaps.at(index + 1);
      const float iy1 = logMaps.at(index + rowStride);
      const float ix1y1 = logMaps.at(index + rowStride + 1);
      const float ix1_y1_ = logMaps.at(index - rowStride - 1);
      const float ix1_ = logMaps.at(index - 1);
      const float iy1_ = logMaps.at(index - rowStride);
      LogDerivatives d;  // float32, in the official expression order
      d.dx = 0.5f * (ix1 - ix1_);
      d.dy = 0.5f * (iy1 - iy1_);
      d.dxx = ix1 - 2.0f * i + ix1_;
      d.dxy = 0.5f * (ix1y1 - ix1 - iy1 + i + i - ix1_ - iy1_ + ix1_y1_);
      d.dyy = iy1 - 2.0f * i + iy1_;

      if (refinement == DarkRefinement::Official) {
        const std::array<double, 2> step = officialStep(d);
        location[0] = roundToFloat(location[0] - step[0]);
        location[1] = roundToFloat(location[1] - step[1]);
        result.refinement[slot] = KeypointRefinement::Newton;
      } else {
        float refined[2];
        result.refinement[slot] = guardedRefinement(d, location, width, height, refined);
        if (result.refinement[slot] != KeypointRefinement::None) {
          location[0] = refined[0];
          location[1] = refined[1];
        }
      }
    }
    // numpy: float32 keypoints / [w - 1, h - 1] * input_size, promoted to float64.
    result.inputPixels[slot] = {static_cast<double>(location[0]) / (width - 1) * inputSize.width,
                                static_cast<double>(location[1]) / (height - 1) * inputSize.height};
  }
  return result;
}

}  // namespace sapiens
