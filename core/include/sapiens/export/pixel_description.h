#pragma once
// What the results say about one pixel, in words: the hover read-out of a viewer.

#include "sapiens/result/frame_result.h"

#include <string>
#include <vector>

namespace sapiens {

/// For pixel (x, y) of `result`, in this order where the task ran: the seg29 part ("Torso"), the nearest
/// keypoint at or above `keypointThreshold` with its score ("Nose 0.93"; measured from the pixel's
/// centre over every person), "depth 2.41 m", "normal 0.12 -0.50 0.86". Empty outside the picture.
std::vector<std::string> describePixel(const FrameResult& result, int x, int y, double keypointThreshold);

}  // namespace sapiens
