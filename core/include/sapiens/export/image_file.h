#pragma once
// 8-bit pictures (overlays, masks, visualised maps) written atomically in the format their file name asks
// for.

#include <opencv2/core/mat.hpp>

#include <string>
#include <vector>

namespace sapiens {

/// Encodes `image` (as cv::imwrite would: BGR, 1 or 3 or 4 channels) by the extension of `path` (.png,
/// .jpg, .jpeg, .bmp, .tif, .tiff, .webp, .ppm; case-insensitive), with OpenCV imwrite `params`, and replaces
/// `path` atomically. A non-empty `note` (e.g. that the picture comes from untrained demo weights) goes into
/// a PNG as its "Comment" text chunk; other formats have no room for it. Throws ExportError naming the file
/// for an empty image, an unknown extension or a failed encode, IoError when the file cannot be written.
void writeImageFile(const std::string& path, const cv::Mat& image, const std::vector<int>& params = {},
                    const std::string& note = {});

/// `png` (a complete PNG file) with a tEXt chunk keyword\0text inserted before its IEND chunk. Throws
/// std::invalid_argument when `png` does not end in an IEND chunk or the keyword is not 1-79 characters.
std::vector<unsigned char> withPngText(std::vector<unsigned char> png, const std::string& keyword,
                                       const std::string& text);

}  // namespace sapiens
