#include "sapiens/export/matte_png.h"

#include "sapiens/export/image_file.h"

#include <fmt/format.h>
#include <opencv2/core.hpp>

#include <cmath>
#include <stdexcept>

namespace sapiens {

namespace {

void requireAlpha(const cv::Mat& alpha, const char* what) {
  if (alpha.empty() || alpha.type() != CV_32FC1)
    throw std::invalid_argument(
        fmt::format("{}: alpha must be a CV_32FC1 map, got {}", what, cv::typeToString(alpha.type())));
}

void requireSameSize(const cv::Mat& bgr, const cv::Mat& alpha, const char* what) {
  if (bgr.type() != CV_8UC3 || bgr.size() != alpha.size())
    throw std::invalid_argument(fmt::format("{}: the picture ({} {}x{}) and the alpha matte ({}x{}) differ",
                                            what, cv::typeToString(bgr.type()), bgr.cols, bgr.rows,
                                            alpha.cols, alpha.rows));
}

float unitAlpha(float a) {
  return std::isfinite(a) ? std::min(1.0f, std::max(0.0f, a)) : 0.0f;
}

}  // namespace

cv::Mat alphaImage16(const cv::Mat& alpha) {
  requireAlpha(alpha, "alphaImage16");
  cv::Mat out(alpha.size(), CV_16UC1);
  for (int y = 0; y < alpha.rows; ++y) {
    const float* a = alpha.ptr<float>(y);
    auto* o = out.ptr<std::uint16_t>(y);
    for (int x = 0; x < alpha.cols; ++x)
      o[x] = static_cast<std::uint16_t>(std::lround(unitAlpha(a[x]) * 65535.0f));
  }
  return out;
}

cv::Mat cutoutImage(const cv::Mat& bgr, const cv::Mat& alpha) {
  requireAlpha(alpha, "cutoutImage");
  requireSameSize(bgr, alpha, "cutoutImage");
  cv::Mat out(alpha.size(), CV_8UC4);
  for (int y = 0; y < alpha.rows; ++y) {
    const float* a = alpha.ptr<float>(y);
    const auto* p = bgr.ptr<cv::Vec3b>(y);
    auto* o = out.ptr<cv::Vec4b>(y);
    for (int x = 0; x < alpha.cols; ++x)
      o[x] = {p[x][0], p[x][1], p[x][2], static_cast<std::uint8_t>(std::lround(unitAlpha(a[x]) * 255.0f))};
  }
  return out;
}

cv::Mat mattingComposite(const cv::Mat& bgr, const cv::Mat& alpha, const cv::Mat& foreground) {
  requireAlpha(alpha, "mattingComposite");
  requireSameSize(bgr, alpha, "mattingComposite");
  const bool premultiplied = !foreground.empty();
  if (premultiplied && (foreground.type() != CV_32FC3 || foreground.size() != alpha.size()))
    throw std::invalid_argument("mattingComposite: the foreground must be CV_32FC3 at the matte's size");
  const cv::Vec3f green(64.0f / 255.0f, 177.0f / 255.0f, 0.0f);  // B, G, R
  cv::Mat out(alpha.size(), CV_8UC3);
  for (int y = 0; y < alpha.rows; ++y) {
    const float* a = alpha.ptr<float>(y);
    const auto* p = bgr.ptr<cv::Vec3b>(y);
    auto* o = out.ptr<cv::Vec3b>(y);
    for (int x = 0; x < alpha.cols; ++x) {
      const float k = unitAlpha(a[x]);
      for (int c = 0; c < 3; ++c) {
        const float front = premultiplied ? foreground.ptr<cv::Vec3f>(y)[x][2 - c] : k * p[x][c] / 255.0f;
        const float value = (std::isfinite(front) ? front : 0.0f) + (1.0f - k) * green[c];
        o[x][c] = static_cast<std::uint8_t>(std::min(1.0f, std::max(0.0f, value)) * 255.0f);
      }
    }
  }
  return out;
}

void writeAlphaPng(const std::string& path, const cv::Mat& alpha, const std::string& note) {
  writeImageFile(path, alphaImage16(alpha), {}, note);
}

void writeCutoutPng(const std::string& path, const cv::Mat& bgr, const cv::Mat& alpha,
                    const std::string& note) {
  writeImageFile(path, cutoutImage(bgr, alpha), {}, note);
}

}  // namespace sapiens
