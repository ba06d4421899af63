#pragma once
// 8-bit pictures (overlays, masks, visualised maps) written atomically in the format their file name asks
// for.

#include <opencv2/core/mat.hpp>

#include <string>
#include <vector>

namespace sapiens {

/// Encodes `image` (as cv::imwrite would: BGR, 1 or 3 or 4 channels) by the extension of `path` (.png,
/// .jpg, .jpeg, .bmp, .tif, .tiff, .webp, .ppm; case-insensitive), with OpenCV imwrite `params`, and replaces
/// `path` atomically. Throws ExportError naming the file for an empty image, an unknown extension or a
/// failed encode, IoError when the file cannot be written.
void writeImageFile(const std::string& path, const cv::Mat& image, const std::vector<int>& params = {});

}  // namespace sapiens
