#include "sapiens/pipeline/task_analysis.h"

#include "pipeline/image_inference.h"
#include "sapiens/model/model.h"
#include "sapiens/pipeline/keypoint_lifting.h"
#include "sapiens/pipeline/person_boxes.h"

#include <fmt/format.h>

#include <stdexcept>

namespace sapiens {

std::vector<std::string> analyzeTaskBatch(const Model& model, const std::vector<cv::Mat>& images,
                                          const std::vector<FrameResult*>& frames, InputSize inputSize,
                                          const std::vector<BoundingBox>& userBoxes) {
  return analyzeTaskBatch(
      model, images, frames, inputSize,
      std::vector<PictureBoxes>(images.size(), userBoxes.empty() ? PictureBoxes() : PictureBoxes(userBoxes)));
}

std::vector<std::string> analyzeTaskBatch(const Model& model, const std::vector<cv::Mat>& images,
                                          const std::vector<FrameResult*>& frames, InputSize inputSize,
                                          const std::vector<PictureBoxes>& boxes) {
  if (boxes.size() != images.size())
    throw std::invalid_argument(
        fmt::format("analyzeTaskBatch: {} box lists for {} pictures", boxes.size(), images.size()));
  AnalysisOptions analysis;
  analysis.inputSize = inputSize;
  analysis.pose.inputSize = inputSize;
  std::vector<std::string> boxSources(images.size());
  if (model.task() != Task::Pose) {
    analyzeImages(model, images, frames, analysis);
    if (model.task() == Task::Pointmap || model.task() == Task::Matting)  // the matte marks the person
      for (FrameResult* frame : frames) liftFrameKeypoints(*frame);
    return boxSources;
  }
  // Pictures where the user says nobody is get no pose; the others go through in one pass.
  std::vector<cv::Mat> posed;
  std::vector<FrameResult*> posedFrames;
  std::vector<std::vector<BoundingBox>> personBoxes;
  std::vector<std::size_t> posedIndices;
  for (std::size_t i = 0; i < images.size(); ++i) {
    if (boxes[i] && boxes[i]->empty()) {
      boxSources[i] = "user";
      frames[i]->poses.clear();
      continue;
    }
    PersonBoxRequest request;
    if (boxes[i]) request.userBoxes = *boxes[i];
    if (frames[i]->has(Task::Seg)) request.segLabels = &frames[i]->segLabels;
    personBoxes.emplace_back();
    for (const SourcedBox& b : choosePersonBoxes(images[i], request)) {
      personBoxes.back().push_back(b.box);
      boxSources[i] = b.source;
    }
    posed.push_back(images[i]);
    posedFrames.push_back(frames[i]);
    posedIndices.push_back(i);
  }
  if (!posed.empty()) analyzeImages(model, posed, posedFrames, analysis, personBoxes);
  for (std::size_t i : posedIndices) {
    for (PoseInstance& pose : frames[i]->poses) pose.bboxSource = boxSources[i];
    liftFrameKeypoints(*frames[i]);
  }
  return boxSources;
}

std::string analyzeTask(const Model& model, const cv::Mat& bgr, FrameResult& frame, InputSize inputSize,
                        const std::vector<BoundingBox>& userBoxes) {
  return analyzeTaskBatch(model, {bgr}, {&frame}, inputSize, userBoxes).front();
}

}  // namespace sapiens
