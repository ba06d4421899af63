#include "sapiens/export/mask_png.h"

#include "export/file_extension.h"
#include "export/png_by_rows.h"
#include "sapiens/export/image_file.h"
#include "sapiens/export/overlay.h"
#include "sapiens/io/export_error.h"

#include <opencv2/core.hpp>

#include <stdexcept>

namespace sapiens {

void writeLabelPng(const std::string& path, const cv::Mat& labels, const std::string& note) {
  if (labels.empty() || labels.type() != CV_8UC1) {
    throw ExportError(path,
                      "a label PNG takes CV_8UC1 class indices, not " +
                          (labels.empty() ? std::string("an empty map") : cv::typeToString(labels.type())));
  }
  // Lossless whatever the name says: a label map in JPEG would invent classes.
  if (lowerExtension(path) != ".png") throw ExportError(path, "label maps are written as .png only");
  writeImageFile(path, labels, {}, note);
}

void writeSegmentationOverlay(const std::string& path, const cv::Mat& imageBgr, const cv::Mat& labels,
                              const SegClasses& classes, const std::string& note) {
  try {
    if (lowerExtension(path) != ".png") {
      writeImageFile(path, segmentationOverlay(imageBgr, labels, classes), {}, note);
      return;
    }
    // A band at a time from the picture to libpng: the overlay never exists at the picture's size.
    detail::writePngByRows(
        path, imageBgr.cols, imageBgr.rows, 3,
        [&](int firstRow, cv::Mat& band) {
          blendSegmentationRows(imageBgr, labels, classes, kSegmentationOverlayOpacity, firstRow, band);
        },
        note);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
}

}  // namespace sapiens
