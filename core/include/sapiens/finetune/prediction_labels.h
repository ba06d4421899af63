#pragma once
// A new frame of a label set made from a picture: its labels start empty, or from a model's result on
// it ("start from prediction"): seg labels as painted, the keypoints scored at the threshold or above
// as placed, dense maps as targets.

#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/result/frame_result.h"
#include "sapiens/result/keypoint_metadata.h"

#include <opencv2/core/mat.hpp>

#include <optional>

namespace sapiens {

enum class PredictionUse {
  Used,              ///< the labels are the prediction's
  NotAsked,          ///< empty labels, as asked
  NoPrediction,      ///< no result of the set's task at the picture's size: empty labels
  ClassesDoNotFit,   ///< the prediction has classes the set does not: empty labels
  DenseNeedsResult,  ///< dense targets are imported, not drawn: no frame without the result
  NoHead,            ///< the set's task has no head: no frame
};

struct PredictionLabels {
  std::optional<FrameLabels> frame;  ///< nullopt for DenseNeedsResult and NoHead
  PredictionUse use = PredictionUse::NotAsked;
};

/// `picture` (BGR) as a frame of `labels`, from `result` (may be null) when `fromPrediction`.
PredictionLabels labelsFromPrediction(const LabelSet& labels, const cv::Mat& picture,
                                      const FrameResult* result, bool fromPrediction,
                                      float keypointThreshold = kDefaultKeypointThreshold);

}  // namespace sapiens
