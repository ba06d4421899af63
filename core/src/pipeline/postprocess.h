#pragma once
// From dense model outputs back to the picture's pixel grid, as the official demo scripts do it. Every
// function takes the output of one batch item (C, h, w) or a batch (B, C, h, w) with the item's index, on
// any device, and does the heavy work there; only the final image-sized result is copied to the host.

#include "pipeline/preprocess.h"
#include "sapiens/result/frame_result.h"

#include <ATen/core/Tensor.h>
#include <opencv2/core/mat.hpp>

#include <cstdint>

namespace sapiens {

/// One item of a batched output: (B, C, h, w) -> (1, C, h, w). A (C, h, w) tensor is item 0 of itself.
at::Tensor batchItem(const at::Tensor& output, std::int64_t index);

/// Bilinear (align_corners false, no antialias) resize of (1, C, h, w) to `size` (W x H), float32.
at::Tensor resizeBilinear(const at::Tensor& map, cv::Size size);

// --- segmentation ------------------------------------------------------------------------------

/// Logits upsampled to the image size: (1, C, H, W), float32, on the logits' device.
at::Tensor upsampleSegLogits(const at::Tensor& logits, cv::Size imageSize);

struct SegResult {
  cv::Mat labels;            ///< CV_8UC1, class of the first maximal logit
  at::Tensor probabilities;  ///< (C, H, W) float32 CPU softmax of the upsampled logits, if asked for
};

/// Upsample the (1, C, h, w) logits to the image, argmax over classes (first maximum). Only the label
/// map leaves the device unless `withProbabilities`. Throws std::invalid_argument for more than 256
/// classes (labels are 8-bit).
SegResult segLabels(const at::Tensor& logits, cv::Size imageSize, bool withProbabilities = false);

// --- matting --------------------------------------------------------------------------------------

struct Matte {
  cv::Mat alpha;       ///< CV_32FC1 in [0, 1]
  cv::Mat foreground;  ///< CV_32FC3 RGB in [0, 1], premultiplied by alpha; empty for an alpha-only head
};

/// A stretched matting output (1, C, h, w) back to the picture, as the official demo does: bilinear resize
/// (align_corners false) of all channels, clipped to [0, 1]; alpha is the last channel, the premultiplied
/// foreground RGB the first three when C is 4. Throws std::invalid_argument for another channel count.
Matte matteImage(const at::Tensor& matting, cv::Size imageSize);

// --- letterboxed dense tasks ---------------------------------------------------------------------

/// n / max(||n||, 1e-8) over the channel dimension, on the tensor's device.
at::Tensor unitNormals(const at::Tensor& normals);

/// The letterbox padding removed from (1, C, h, w). Throws std::invalid_argument when the padding does
/// not fit inside the map.
at::Tensor cropPadding(const at::Tensor& map, const Padding& padding);

/// (1, 3, h, w) on any device -> H x W CV_32FC3 on the host (channel order kept).
cv::Mat toImageMat(const at::Tensor& map);

/// Below this length a resampled normal is taken as no normal at all (zero vector, "invalid").
inline constexpr double kInvalidNormalLength = 1e-6;

/// Unit vectors again after resampling (bilinear interpolation shortens them where neighbours disagree):
/// n / ||n|| over the channel dimension; a vector shorter than kInvalidNormalLength becomes exactly zero.
at::Tensor resampledUnitNormals(const at::Tensor& normals);

/// Raw normals -> unit vectors, padding cropped, bilinear to the image size, then unit length again
/// (resampledUnitNormals; the official script stops before that last step, so its vectors are shorter than
/// 1 where the map was interpolated but point the same way). CV_32FC3 (x, y, z): every pixel is a unit
/// vector or, where the network gave no direction, exactly zero.
cv::Mat normalImage(const at::Tensor& normals, const Padding& padding, cv::Size imageSize);

/// Raw albedo clamped to [0, 1], cropped, bilinear to the image size, CV_32FC3 RGB.
cv::Mat albedoImage(const at::Tensor& albedo, const Padding& padding, cv::Size imageSize);

/// torchvision gaussian_blur with a 3 x 3 kernel, sigma 0.8, reflect padding, per channel, (1, C, h, w).
at::Tensor gaussianBlur3x3(const at::Tensor& map, double sigma = 0.8);

/// Canonical pointmaps (B, 3, h, w) divided by their scale (B, 1), item by item: metric XYZ.
at::Tensor metricPointmap(const at::Tensor& canonical, const at::Tensor& scale);

/// Metric pointmap (1, 3, h, w), padding cropped; when the image is larger than the cropped map in either
/// direction the map is first blurred four times (gaussianBlur3x3) as the official script does before
/// upsampling; then bilinear to the image size. CV_32FC3 (X, Y, Z).
cv::Mat pointmapImage(const at::Tensor& metric, const Padding& padding, cv::Size imageSize);

/// The pointmap model's canonical focal length in input pixels: training rescales every scene so that
/// its camera has this focal length, and the scale output is canonical focal / actual focal.
inline constexpr double kCanonicalFocalPx = 768.0;

/// Pinhole intrinsics of the picture implied by the pointmap scale, in image pixels.
///
/// In input pixels the focal length is f = kCanonicalFocalPx / scale, and the principal point is taken
/// at the centre of the input, c = ((W_in - 1) / 2, (H_in - 1) / 2) (pixel centres at integers, as the
/// training targets use them). The letterbox maps an image pixel x to the input pixel
/// u = (x + 0.5) * r_x - 0.5 + left with r_x = (W_in - left - right) / W (cv::resize's pixel-centre
/// convention, which the post-processing's bilinear resize undoes with the same convention), hence
///   fx = f / r_x,  cx = (c_x - left + 0.5) / r_x - 0.5,
///   fy = f / r_y,  cy = (c_y - top + 0.5) / r_y - 0.5,   r_y = (H_in - top - bottom) / H.
/// Throws std::invalid_argument for a scale that is not finite and positive or padding that leaves
/// no picture.
Intrinsics intrinsicsFromScale(double scale, const Padding& padding, InputSize inputSize, cv::Size imageSize);

}  // namespace sapiens
