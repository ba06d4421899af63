#pragma once
// A frame number drawn into the pixels as large black and white blocks, so that a test (or a benchmark)
// can tell which frame it got back after encoding, decoding, seeking or dropping.

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <optional>

namespace sapiens {

/// Numbers are stored modulo this.
inline constexpr std::int64_t kFrameNumberModulus = 1 << 16;

/// Fills `bgr` (CV_8UC3, at least 16x20 pixels) with a grid of 4 x 5 blocks: 16 bits of
/// `number % kFrameNumberModulus`, most significant first, then 4 check blocks (the low 4 bits inverted).
/// Blocks survive lossy video compression at any sensible quality.
void drawFrameNumber(cv::Mat& bgr, std::int64_t number);

/// A new width x height picture holding `number`.
cv::Mat frameNumberPicture(int width, int height, std::int64_t number);

/// The number drawFrameNumber stored, or nullopt when a block is neither clearly dark nor clearly light or
/// the check blocks disagree.
std::optional<std::int64_t> readFrameNumber(const cv::Mat& bgr);

}  // namespace sapiens
