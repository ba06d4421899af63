#include "sapiens/media/frame_number_pattern.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <stdexcept>

namespace sapiens {
namespace {

constexpr int kColumns = 4;
constexpr int kRows = 5;
constexpr int kDataBits = 16;

cv::Rect block(const cv::Mat& picture, int bit) {
  const int column = bit % kColumns;
  const int row = bit / kColumns;
  const int x0 = picture.cols * column / kColumns;
  const int x1 = picture.cols * (column + 1) / kColumns;
  const int y0 = picture.rows * row / kRows;
  const int y1 = picture.rows * (row + 1) / kRows;
  return {x0, y0, x1 - x0, y1 - y0};
}

bool bitOf(std::int64_t value, int bit) {
  const int checkBit = bit - kDataBits;  // the check row repeats the low 4 bits, inverted
  if (checkBit >= 0) return ((value >> (3 - checkBit)) & 1) == 0;
  return ((value >> (kDataBits - 1 - bit)) & 1) != 0;
}

}  // namespace

void drawFrameNumber(cv::Mat& bgr, std::int64_t number) {
  if (bgr.type() != CV_8UC3 || bgr.cols < kColumns * 4 || bgr.rows < kRows * 4)
    throw std::invalid_argument("drawFrameNumber needs a CV_8UC3 picture of at least 16x20 pixels");
  const std::int64_t value = ((number % kFrameNumberModulus) + kFrameNumberModulus) % kFrameNumberModulus;
  for (int bit = 0; bit < kColumns * kRows; ++bit)
    bgr(block(bgr, bit)).setTo(bitOf(value, bit) ? cv::Scalar(255, 255, 255) : cv::Scalar(0, 0, 0));
}

cv::Mat frameNumberPicture(int width, int height, std::int64_t number) {
  cv::Mat picture(height, width, CV_8UC3);
  drawFrameNumber(picture, number);
  return picture;
}

std::optional<std::int64_t> readFrameNumber(const cv::Mat& bgr) {
  if (bgr.type() != CV_8UC3 || bgr.cols < kColumns * 4 || bgr.rows < kRows * 4) return std::nullopt;
  std::int64_t value = 0;
  bool bits[kColumns * kRows] = {};
  for (int bit = 0; bit < kColumns * kRows; ++bit) {
    cv::Rect area = block(bgr, bit);
    // The blocks' centres only: compression smears their edges.
    area = cv::Rect(area.x + area.width / 4, area.y + area.height / 4, std::max(1, area.width / 2),
                    std::max(1, area.height / 2));
    const cv::Scalar mean = cv::mean(bgr(area));
    const double gray = (mean[0] + mean[1] + mean[2]) / 3;
    if (gray > 64 && gray < 192) return std::nullopt;
    bits[bit] = gray >= 192;
  }
  for (int bit = 0; bit < kDataBits; ++bit) value = (value << 1) | (bits[bit] ? 1 : 0);
  for (int bit = kDataBits; bit < kColumns * kRows; ++bit)
    if (bits[bit] != bitOf(value, bit)) return std::nullopt;
  return value;
}

}  // namespace sapiens
