#pragma once
// Frames -> training samples: the network input picture of each sample (whole picture or person crop,
// each augmentation variant) and its targets in the input's pixel grid, as the official pipelines make
// them (seg: stretch + nearest labels; pose: UDP crop + Gaussian heatmaps; dense: letterbox).

#include "sapiens/finetune/fine_tuner.h"
#include "sapiens/finetune/frame_labels.h"

#include <ATen/core/Tensor.h>
#include <opencv2/core/mat.hpp>

#include <vector>

namespace sapiens::detail {

/// The left/right tables a horizontal flip needs: class or keypoint i becomes swap[i].
struct FlipTables {
  std::vector<int> swap;
};
/// Seg: seg29's swap pairs for seg29's classes, else pairs named Left_X / Right_X (any case). Pose:
/// keypoints308's flip indices for 308 keypoints, else identity.
FlipTables flipTablesFor(Task task, const std::vector<LabelClass>& classes, std::size_t count);

/// resources/data/seg29.json's cross-entropy class weights (29 values).
std::vector<double> seg29ClassWeights();
/// Whether `classes` are seg29's (by name, in order); empty counts as seg29.
bool isSeg29(const std::vector<LabelClass>& classes);

/// Per sample targets; which fields are set depends on the task.
struct SampleTargets {
  at::Tensor labels;     ///< seg (H, W) int64, 255 = ignore
  at::Tensor heatmaps;   ///< pose (K, H/4, W/4) float
  at::Tensor weights;    ///< pose (K) float: labelled and inside the heatmap
  at::Tensor keypoints;  ///< pose (K, 2) float, input pixels
  at::Tensor dense;      ///< normal/albedo/pointmap (3, H, W), matting (4, H, W): alpha last; 0 where invalid
  at::Tensor valid;      ///< (H, W) bool
  at::Tensor scale;      ///< pointmap (1) float: canonical focal / focal
  // What the starting head predicted where nothing was labelled (see addStartingHeadTargets); undefined
  // when training does not keep it.
  at::Tensor teacherLabels;   ///< seg (H, W) uint8: the starting head's labels
  at::Tensor distillWeights;  ///< pose (K) float: weight of the starting head's heatmap where `weights` is
                              ///< 0; seg, dense: (1) float, the weight of the starting head's labels / maps
};

/// Every tensor field of SampleTargets, for code that treats them alike (stacking, moving).
inline constexpr at::Tensor SampleTargets::*kSampleTargetFields[] = {
    &SampleTargets::labels,    &SampleTargets::heatmaps,      &SampleTargets::weights,
    &SampleTargets::keypoints, &SampleTargets::dense,         &SampleTargets::valid,
    &SampleTargets::scale,     &SampleTargets::teacherLabels, &SampleTargets::distillWeights};

/// Makes the starting head's prediction `outputs` (one sample's, batch of 1) the target of whatever `t`
/// leaves unlabelled, at `weight`: seg, the labels of the unlabelled pixels; pose, the heatmaps of the
/// unlabelled keypoints; dense tasks, the maps at the pixels without a target.
void addStartingHeadTargets(Task task, const ModelOutputs& outputs, double weight, SampleTargets& t);

struct BuiltSample {
  SampleInfo info;
  cv::Mat input;  ///< CV_8UC3 BGR, the input size
  SampleTargets targets;
};

/// Every sample of one frame (all variants; validation frames: the unaugmented one only). Throws
/// LabelSetError for labels it cannot use.
std::vector<BuiltSample> buildSamples(const LabelSet& labels, std::size_t frameIndex,
                                      const FrameLabels& frame, const TrainingSettings& settings,
                                      const FlipTables& flip, bool validation);

/// Targets stacked over samples (a leading batch dimension on every defined field).
SampleTargets stackTargets(const std::vector<const SampleTargets*>& targets);

/// Heatmap sigma for a heatmap `width` wide: the official 6 at 192, proportionally smaller, at least 1.
double heatmapSigma(int heatmapWidth);

}  // namespace sapiens::detail
