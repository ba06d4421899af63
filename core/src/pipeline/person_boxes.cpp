#include "sapiens/pipeline/person_boxes.h"

#include "sapiens/common/log.h"

#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sapiens {
namespace {

float iou(const BoundingBox& a, const BoundingBox& b) {
  const float ix = std::max(0.f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const float iy = std::max(0.f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const float inter = ix * iy;
  const float uni = a.width() * a.height() + b.width() * b.height() - inter;
  return uni > 0 ? inter / uni : 0.f;
}

}  // namespace

namespace {

// The closing's cost is the pixel count times the kernel (2% of the diagonal): at 16000 x 16000 about
// 10^11 operations, minutes. Larger masks are measured at this long side (each pixel then says whether
// any of the pixels it covers is foreground); boxes are scaled back, to within one reduced pixel.
constexpr int kWorkingLongSide = 2048;

// labels > 0, at most kWorkingLongSide on its long side.
cv::Mat workingForeground(const cv::Mat& labels) {
  cv::Mat foreground = labels > 0;
  const int longSide = std::max(labels.cols, labels.rows);
  if (longSide <= kWorkingLongSide) return foreground;
  const double scale = static_cast<double>(kWorkingLongSide) / longSide;
  const cv::Size size(std::max(1, static_cast<int>(std::lround(labels.cols * scale))),
                      std::max(1, static_cast<int>(std::lround(labels.rows * scale))));
  cv::Mat reduced;
  cv::resize(foreground, reduced, size, 0, 0, cv::INTER_AREA);
  return reduced > 0;
}

}  // namespace

std::vector<BoundingBox> boxesFromSegmentation(const cv::Mat& labels, const SegmentationBoxOptions& options) {
  if (labels.empty()) return {};
  CV_Assert(labels.type() == CV_8UC1);
  cv::Mat foreground = workingForeground(labels);
  const double sx = static_cast<double>(labels.cols) / foreground.cols;
  const double sy = static_cast<double>(labels.rows) / foreground.rows;
  const double diagonal = std::hypot(foreground.cols, foreground.rows);
  const int k = std::max(1, static_cast<int>(std::lround(options.closeFraction * diagonal)) | 1);
  cv::morphologyEx(foreground, foreground, cv::MORPH_CLOSE,
                   cv::getStructuringElement(cv::MORPH_ELLIPSE, cv::Size(k, k)));

  cv::Mat componentLabels, stats, centroids;
  const int count =
      cv::connectedComponentsWithStats(foreground, componentLabels, stats, centroids, 8, CV_32S);
  struct Component {
    int area;
    BoundingBox box;
  };
  std::vector<Component> components;
  int largest = 0;
  for (int i = 1; i < count; ++i) largest = std::max(largest, stats.at<int>(i, cv::CC_STAT_AREA));
  const double imageArea = static_cast<double>(foreground.cols) * foreground.rows;
  for (int i = 1; i < count; ++i) {
    const int area = stats.at<int>(i, cv::CC_STAT_AREA);
    if (area < options.minAreaFraction * imageArea || area < options.minShareOfLargest * largest) continue;
    const int left = stats.at<int>(i, cv::CC_STAT_LEFT), top = stats.at<int>(i, cv::CC_STAT_TOP);
    const int right = left + stats.at<int>(i, cv::CC_STAT_WIDTH);  // exclusive
    const int bottom = top + stats.at<int>(i, cv::CC_STAT_HEIGHT);
    const auto edge = [](double value, int size) {
      return static_cast<float>(std::clamp(value, 0.0, static_cast<double>(size - 1)));
    };
    components.push_back(
        {area,
         {edge(std::floor(left * sx), labels.cols), edge(std::floor(top * sy), labels.rows),
          edge(std::ceil(right * sx) - 1, labels.cols), edge(std::ceil(bottom * sy) - 1, labels.rows)}});
  }
  std::sort(components.begin(), components.end(), [](auto& a, auto& b) { return a.area > b.area; });
  std::vector<BoundingBox> boxes;
  for (auto& c : components) boxes.push_back(c.box);
  return boxes;
}

std::vector<BoundingBox> detectPeopleHog(const cv::Mat& bgr) {
  if (bgr.empty()) return {};
  static const cv::HOGDescriptor hog = [] {
    cv::HOGDescriptor d;
    d.setSVMDetector(cv::HOGDescriptor::getDefaultPeopleDetector());
    return d;
  }();
  // The detector's window is 64x128: scale large images down so people of ordinary size are found fast.
  const double scale = std::min(1.0, 800.0 / std::max(bgr.cols, bgr.rows));
  cv::Mat small;
  if (scale < 1.0)
    cv::resize(bgr, small, cv::Size(), scale, scale, cv::INTER_AREA);
  else
    small = bgr;
  if (small.cols < 64 || small.rows < 128) return {};
  std::vector<cv::Rect> found;
  std::vector<double> weights;
  hog.detectMultiScale(small, found, weights, 0.0, cv::Size(8, 8), cv::Size(16, 16), 1.05, 2.0, false);

  std::vector<int> order(found.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return weights[a] > weights[b]; });
  std::vector<BoundingBox> kept;
  for (int i : order) {
    if (weights[i] < 0.5) continue;
    const cv::Rect& r = found[i];
    BoundingBox box{static_cast<float>(r.x / scale), static_cast<float>(r.y / scale),
                    static_cast<float>((r.x + r.width - 1) / scale),
                    static_cast<float>((r.y + r.height - 1) / scale)};
    box.x1 = std::max(0.f, box.x1), box.y1 = std::max(0.f, box.y1);
    box.x2 = std::min<float>(bgr.cols - 1, box.x2), box.y2 = std::min<float>(bgr.rows - 1, box.y2);
    bool overlaps =
        std::any_of(kept.begin(), kept.end(), [&](const BoundingBox& k) { return iou(k, box) > 0.3f; });
    if (!overlaps) kept.push_back(box);
  }
  return kept;
}

BoundingBox fullImageBox(int width, int height) {
  return {0.f, 0.f, static_cast<float>(width - 1), static_cast<float>(height - 1)};
}

std::vector<SourcedBox> choosePersonBoxes(const cv::Mat& bgr, const PersonBoxRequest& request) {
  std::vector<SourcedBox> result;
  auto take = [&](const std::vector<BoundingBox>& boxes, const char* source) {
    for (const auto& b : boxes) result.push_back({b, source});
    return !result.empty();
  };
  if (take(request.userBoxes, "user")) return result;
  if (request.segLabels && take(boxesFromSegmentation(*request.segLabels), "segmentation")) return result;
  if (request.useDetector && take(detectPeopleHog(bgr), "detector")) return result;
  result.push_back({fullImageBox(bgr.cols, bgr.rows), "full-image"});
  return result;
}

BoundingBox checkedBox(double x1, double y1, double x2, double y2, const std::string& what) {
  const double v[4] = {x1, y1, x2, y2};
  if (!std::all_of(v, v + 4, [](double x) { return std::isfinite(x); }))
    throw std::invalid_argument("bounding box " + what + " is not x1,y1,x2,y2");
  if (x2 <= x1 || y2 <= y1)
    throw std::invalid_argument("bounding box " + what + " is empty: x2 must exceed x1 and y2 exceed y1");
  return {static_cast<float>(x1), static_cast<float>(y1), static_cast<float>(x2), static_cast<float>(y2)};
}

BoundingBox drawnBox(double left, double top, double right, double bottom, int width, int height) {
  return checkedBox(std::max(0.0, std::floor(left)), std::max(0.0, std::floor(top)),
                    std::min(std::ceil(right), double(width - 1)),
                    std::min(std::ceil(bottom), double(height - 1)), "the drawn person box");
}

std::vector<BoundingBox> poseBoxes(const FrameResult& result, int except) {
  std::vector<BoundingBox> boxes;
  for (std::size_t i = 0; i < result.poses.size(); ++i) {
    if (static_cast<int>(i) != except) boxes.push_back(result.poses[i].bbox);
  }
  return boxes;
}

BoundingBox parseBox(const std::string& text) {
  std::istringstream in(text);
  float v[4];
  char comma = 0;
  bool ok = static_cast<bool>(in >> v[0]);
  for (int i = 1; ok && i < 4; ++i) ok = (in >> comma >> v[i]) && comma == ',';
  in >> std::ws;
  const std::string what = "'" + text + "'";
  if (!ok || !in.eof()) throw std::invalid_argument("bounding box " + what + " is not x1,y1,x2,y2");
  return checkedBox(v[0], v[1], v[2], v[3], what);
}

}  // namespace sapiens
