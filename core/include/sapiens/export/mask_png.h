#pragma once
// Segmentation results as pictures: the class index map itself (lossless, for tools and for training
// labels) and the official colour visualisation.

#include <opencv2/core/mat.hpp>

#include <string>

namespace sapiens {

struct SegClasses;

/// `labels` (CV_8UC1 class indices) as an 8-bit single-channel PNG whose pixel values are the class
/// indices (0 = background). Throws ExportError naming the file when `labels` is not CV_8UC1 or the name
/// does not end in .png (a lossy format would invent classes).
void writeLabelPng(const std::string& path, const cv::Mat& labels, const std::string& note = {});

/// segmentationOverlay(imageBgr, labels, classes) as a PNG (or whatever the extension asks for).
void writeSegmentationOverlay(const std::string& path, const cv::Mat& imageBgr, const cv::Mat& labels,
                              const SegClasses& classes, const std::string& note = {});

}  // namespace sapiens
