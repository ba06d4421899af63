#include "sapiens/export/image_file.h"

#include "export/file_extension.h"
#include "sapiens/export/export_error.h"
#include "sapiens/io/atomic_file.h"

#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <array>

namespace sapiens {

void writeImageFile(const std::string& path, const cv::Mat& image, const std::vector<int>& params) {
  static constexpr std::array<const char*, 8> kExtensions = {".png", ".jpg",  ".jpeg", ".bmp",
                                                             ".tif", ".tiff", ".webp", ".ppm"};
  const std::string extension = lowerExtension(path);
  if (std::find(kExtensions.begin(), kExtensions.end(), extension) == kExtensions.end()) {
    throw ExportError(path, "unknown picture format '" + extension +
                                "' (use .png, .jpg, .jpeg, .bmp, .tif, .tiff, .webp or .ppm)");
  }
  if (image.empty()) throw ExportError(path, "the picture to write is empty");
  std::vector<uchar> encoded;
  try {
    if (!cv::imencode(extension, image, encoded, params) || encoded.empty()) {
      throw ExportError(
          path, "OpenCV could not encode a " + cv::typeToString(image.type()) + " picture as " + extension);
    }
  } catch (const cv::Exception& error) {
    throw ExportError(path, "OpenCV could not encode the picture as " + extension + ": " + error.msg);
  }
  writeFileAtomically(path, std::string_view(reinterpret_cast<const char*>(encoded.data()), encoded.size()));
}

}  // namespace sapiens
