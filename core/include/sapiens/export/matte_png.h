#pragma once
// The matting result as pictures: the alpha matte (16-bit grey, as compositing tools read it), the person
// cut out of the picture (RGBA), and the official demo's view of the result over chroma green.
//
// A non-finite alpha (a NaN from the model) counts as 0: fully transparent, never a stray opaque pixel.

#include <opencv2/core/mat.hpp>

#include <string>

namespace sapiens {

/// alpha (CV_32FC1) -> CV_16UC1 round(clamp(alpha, 0, 1) * 65535).
cv::Mat alphaImage16(const cv::Mat& alpha);

/// The picture (CV_8UC3 BGR) with round(alpha * 255) as its fourth channel: CV_8UC4 BGRA, the person cut
/// out. Throws std::invalid_argument when the sizes differ.
cv::Mat cutoutImage(const cv::Mat& bgr, const cv::Mat& alpha);

/// The official demo's composite: the premultiplied foreground (CV_32FC3 RGB) plus (1 - alpha) times
/// chroma green (B 64, G 177, R 0); with no foreground (an alpha-only head) the picture times alpha stands
/// in for it. CV_8UC3 BGR.
cv::Mat mattingComposite(const cv::Mat& bgr, const cv::Mat& alpha, const cv::Mat& foreground = cv::Mat());

/// alphaImage16 / cutoutImage written through writeImageFile (PNG keeps 16 bits and the alpha channel).
/// `note`: see writeImageFile.
void writeAlphaPng(const std::string& path, const cv::Mat& alpha, const std::string& note = {});
void writeCutoutPng(const std::string& path, const cv::Mat& bgr, const cv::Mat& alpha,
                    const std::string& note = {});

}  // namespace sapiens
