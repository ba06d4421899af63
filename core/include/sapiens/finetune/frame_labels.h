#pragma once
// One labelled frame as pixels and numbers: what labelling tools edit and training consumes.

#include "sapiens/finetune/label_set.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

namespace sapiens {

inline constexpr std::uint8_t kIgnoreLabel = 255;

struct KeypointLabel {
  double x = 0, y = 0;  ///< picture pixels
  int visibility = 0;   ///< 0 not labelled, 1 labelled but hidden, 2 visible
};

struct PersonLabel {
  std::optional<BoundingBox> bbox;  ///< default: the tight box of the labelled keypoints
  std::vector<KeypointLabel> keypoints;
};

struct FrameLabels {
  cv::Mat image;                    ///< CV_8UC3 BGR
  cv::Mat mask;                     ///< seg: CV_8UC1 class indices, kIgnoreLabel = not labelled
  std::vector<PersonLabel> people;  ///< pose
  cv::Mat target;                   ///< dense tasks: CV_32FC3 (matting: CV_32FC1 alpha), NaN = no target
};

/// The number of classes (seg) or keypoints (pose) the set's labels use.
std::size_t labelCount(const LabelSet& labels);

/// A dense task's target as the label set stores it (targets/STEM.npy): float32 (H, W, 3), or (H, W) for
/// matting's alpha in [0, 1]; NaN marks a pixel without a label. Throws LabelSetError naming `path`
/// otherwise.
void checkDenseTarget(Task task, const cv::Mat& target, const std::string& path);

/// Reads and checks frame `index`: the image, and the label of the set's task. Throws LabelSetError naming
/// the file: missing or unreadable, mask not single-channel 8-bit or of another size than the image, class
/// index out of range, keypoint count or visibility wrong, target not (H, W, 3) float.
FrameLabels readFrameLabels(const LabelSet& labels, std::size_t index);

/// Writes a new frame `name` (image as images/NAME.png, its labels beside it), appends it to the set and
/// saves the manifest; every file atomically. Returns its index.
std::size_t addFrame(LabelSet& labels, const std::string& name, const FrameLabels& frame,
                     FrameSplit split = FrameSplit::Auto);
/// addFrame in two steps, for a caller that writes off its own thread: the set's entry for a new frame
/// `name` (no file touched), then its picture and label files (atomically; neither appended nor saved).
LabelledFrame plannedFrame(const LabelSet& labels, const std::string& name,
                           FrameSplit split = FrameSplit::Auto);
void writeFrameFiles(const LabelSet& labels, const LabelledFrame& entry, const FrameLabels& frame);
/// Replaces the labels of frame `index` (not the image) atomically; a frame without a label file gets one
/// (and the manifest is saved).
void writeFrameLabels(LabelSet& labels, std::size_t index, const FrameLabels& frame);

}  // namespace sapiens
