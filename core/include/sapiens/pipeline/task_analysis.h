#pragma once
// One task model on pictures as every front end runs it: the person boxes for pose chosen as core's
// policy says (the user's, else the segmentation's, else the detector's, else the whole picture), the
// pictures in one forward pass.

#include "sapiens/pipeline/input_size.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <optional>
#include <string>
#include <vector>

namespace sapiens {

class Model;

/// One task model on one picture, into `frame` (analyzeImage at `inputSize`). For pose the person boxes
/// come from choosePersonBoxes: `userBoxes`, else the frame's segmentation when seg already ran, else the
/// detector, else the whole picture; every pose records that source, which is returned ("" otherwise).
std::string analyzeTask(const Model& model, const cv::Mat& bgr, FrameResult& frame, InputSize inputSize,
                        const std::vector<BoundingBox>& userBoxes = {});

/// analyzeTask for several pictures with one forward pass (analyzeImages); the box source per picture.
std::vector<std::string> analyzeTaskBatch(const Model& model, const std::vector<cv::Mat>& images,
                                          const std::vector<FrameResult*>& frames, InputSize inputSize,
                                          const std::vector<BoundingBox>& userBoxes = {});

/// The user's person boxes for one picture: nullopt leaves them to choosePersonBoxes; a list, even an
/// empty one (nobody to pose there), is taken as it is.
using PictureBoxes = std::optional<std::vector<BoundingBox>>;

/// analyzeTaskBatch with the user's boxes per picture (`boxes` has one entry per picture).
std::vector<std::string> analyzeTaskBatch(const Model& model, const std::vector<cv::Mat>& images,
                                          const std::vector<FrameResult*>& frames, InputSize inputSize,
                                          const std::vector<PictureBoxes>& boxes);

}  // namespace sapiens
