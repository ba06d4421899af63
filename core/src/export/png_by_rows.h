#pragma once
// An 8-bit PNG written a band of rows at a time through libpng, for pictures whose full-size result
// should never exist in memory at once (the overlay of a 16000 x 16000 picture is 768 MB).

#include <opencv2/core/mat.hpp>

#include <functional>
#include <string>

namespace sapiens::detail {

/// Fills `band` (rows [firstRow, firstRow + band.rows) of the picture, CV_8UC1 or CV_8UC3 in BGR order).
using FillRows = std::function<void(int firstRow, cv::Mat& band)>;

/// Writes a width x height PNG of `channels` (1: grey, 3: colour from BGR rows) atomically (AtomicFile),
/// with `note` as its tEXt Comment when not empty, OpenCV's default compression (level 1, run-length
/// strategy). Throws ExportError naming the file when libpng fails, IoError when the write does.
void writePngByRows(const std::string& path, int width, int height, int channels, const FillRows& fill,
                    const std::string& note = {});

}  // namespace sapiens::detail
