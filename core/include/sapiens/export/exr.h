#pragma once
// Float maps (depth, pointmap, normals, albedo) as 32-bit float OpenEXR, through OpenCV's codec.

#include <opencv2/core/mat.hpp>

#include <string>

namespace sapiens {

/// Whether this OpenCV build can encode OpenEXR in this process (checked once by encoding a 1x1 map).
/// OpenCV 4.x disables the codec unless OPENCV_IO_ENABLE_OPENEXR is set before its first use; this sets
/// it (unless the environment already has a value). When unsupported, `reason` receives why.
bool exrWritingSupported(std::string* reason = nullptr);

/// Writes a CV_32FC1 map as channel Y, or a CV_32FC3 map with channels 0, 1, 2 (x, y, z or R, G, B, the
/// order FrameResult stores) as EXR channels R, G, B. Throws ExportError naming the file when the codec is
/// unavailable or the map has another type; IoError when the file cannot be written.
void writeExr(const std::string& path, const cv::Mat& map);

}  // namespace sapiens
