#pragma once
// A new frame of a label set made from the picture on display in the main window: its labels start
// empty, or from the model's result on the picture ("start from prediction"), and its name comes from
// the picture's file (a video or camera frame's "source#frameN" too), made unique in the set.

#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QString>

#include <optional>

namespace sapiens::studio {

struct PictureFrame {
  std::optional<FrameLabels> frame;  ///< nullopt: no frame can be made (`note` says why)
  /// Why the labels start empty when a prediction was asked for, or why there is no frame.
  QString note;
};

/// `picture` (BGR) as a frame of `labels`: labels from `result` (its result, if any) when
/// `fromPrediction` and it holds the set's task at the picture's size, else empty. Dense tasks cannot
/// start empty (their targets are imported, not drawn).
PictureFrame pictureFrame(const LabelSet& labels, const cv::Mat& picture, const FrameResult* result,
                          bool fromPrediction);

/// A frame name for the picture at `path`, not yet taken in `labels` (its frames and images/ folder).
QString newFrameName(const LabelSet& labels, const QString& path);

}  // namespace sapiens::studio
