#pragma once
// Person boxes for top-down pose, without an external detector. In order of preference:
//   user          boxes the user gave (--bbox, a JSON file, drawn in the GUI)
//   segmentation  connected components of the body-part segmentation's foreground
//   detector      OpenCV's HOG people detector (ships with OpenCV; weak on partial bodies)
//   full-image    [0, 0, W-1, H-1], the official demo's fallback when its detector finds nobody

#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <string>
#include <vector>

namespace sapiens {

struct SourcedBox {
  BoundingBox box;
  std::string source;  ///< "user", "segmentation", "detector", "full-image"
};

struct SegmentationBoxOptions {
  double minAreaFraction = 0.005;   ///< drop components smaller than this share of the image
  double minShareOfLargest = 0.05;  ///< ... or than this share of the largest person
  double closeFraction = 0.02;      ///< closing kernel (of the image diagonal) that joins a person's parts
};

/// One box per person-sized connected foreground region (labels > 0), largest first. Masks longer than
/// 2048 px are measured at that size: their boxes are exact to within one reduced pixel (8 px at 16000).
std::vector<BoundingBox> boxesFromSegmentation(const cv::Mat& labels,
                                               const SegmentationBoxOptions& options = {});

/// OpenCV's default HOG people detector, with non-maximum suppression; best score first.
std::vector<BoundingBox> detectPeopleHog(const cv::Mat& bgr);

BoundingBox fullImageBox(int width, int height);

struct PersonBoxRequest {
  std::vector<BoundingBox> userBoxes;
  const cv::Mat* segLabels = nullptr;  ///< when segmentation ran on this image
  bool useDetector = true;
};

/// The first non-empty source in the order above; never empty.
std::vector<SourcedBox> choosePersonBoxes(const cv::Mat& bgr, const PersonBoxRequest& request);

/// "x1,y1,x2,y2" -> box; throws std::invalid_argument with the text on malformed or empty boxes.
BoundingBox parseBox(const std::string& text);
/// The same checks for corners that are already numbers (e.g. from a JSON box file); `what` names the
/// box in the message.
BoundingBox checkedBox(double x1, double y1, double x2, double y2, const std::string& what);
/// A box drawn over a `width` x `height` picture (any real corners) as the other boxes are: whole pixels,
/// inclusive corners, clipped to the picture. Throws std::invalid_argument ("the drawn person box ...")
/// when nothing of it is left.
BoundingBox drawnBox(double left, double top, double right, double bottom, int width, int height);
/// The people's boxes in `result`, skipping person `except` (-1: none).
std::vector<BoundingBox> poseBoxes(const FrameResult& result, int except = -1);

}  // namespace sapiens
