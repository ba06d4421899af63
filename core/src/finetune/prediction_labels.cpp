#include "sapiens/finetune/prediction_labels.h"

#include <opencv2/core.hpp>

#include <algorithm>

namespace sapiens {
namespace {

std::vector<PersonLabel> peopleFrom(const FrameResult& result, std::size_t count, float threshold) {
  std::vector<PersonLabel> people;
  for (const PoseInstance& pose : result.poses) {
    PersonLabel person;
    person.bbox = pose.bbox;
    person.keypoints.assign(count, KeypointLabel{});
    for (std::size_t k = 0; k < std::min(count, pose.keypoints.size()); ++k) {
      const bool confident = k < pose.scores.size() && pose.scores[k] >= threshold;
      if (confident) person.keypoints[k] = {pose.keypoints[k][0], pose.keypoints[k][1], 2};
    }
    people.push_back(std::move(person));
  }
  return people;
}

}  // namespace

PredictionLabels labelsFromPrediction(const LabelSet& labels, const cv::Mat& picture,
                                      const FrameResult* result, bool fromPrediction,
                                      float keypointThreshold) {
  const Task task = labels.task;
  const std::size_t count = labelCount(labels);
  PredictionLabels out;
  FrameLabels frame;
  frame.image = picture;
  const bool have = fromPrediction && result && result->width == picture.cols &&
                    result->height == picture.rows && result->has(task);
  out.use = !fromPrediction ? PredictionUse::NotAsked
            : have          ? PredictionUse::Used
                            : PredictionUse::NoPrediction;
  switch (task) {
    case Task::Seg: {
      frame.mask = cv::Mat(picture.size(), CV_8UC1, cv::Scalar(kIgnoreLabel));
      double maxLabel = 0;
      if (have) cv::minMaxLoc(result->segLabels, nullptr, &maxLabel);
      if (have && maxLabel < double(count))
        frame.mask = result->segLabels.clone();
      else if (have)
        out.use = PredictionUse::ClassesDoNotFit;
      break;
    }
    case Task::Pose:
      if (have && count == keypoints308().size())
        frame.people = peopleFrom(*result, count, keypointThreshold);
      else if (have)
        out.use = PredictionUse::ClassesDoNotFit;
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
      if (!have) {
        out.use = PredictionUse::DenseNeedsResult;
        return out;
      }
      frame.target = (task == Task::Normal   ? result->normal
                      : task == Task::Albedo ? result->albedo
                                             : result->pointmap)
                         .clone();
      break;
    case Task::Matting:
      if (!have) {
        out.use = PredictionUse::DenseNeedsResult;
        return out;
      }
      frame.target = result->alpha.clone();
      break;
    case Task::Backbone:
      out.use = PredictionUse::NoHead;
      return out;
  }
  out.frame = std::move(frame);
  return out;
}

}  // namespace sapiens
