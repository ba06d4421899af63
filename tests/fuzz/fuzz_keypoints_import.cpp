// libFuzzer target: the readers of keypoint JSON that users hand in. The first byte picks the reader, the
// rest is the file:
//   0  a COCO keypoints file, imported with importCocoKeypoints against a folder holding a.png (4 x 3);
//      an imported set must open and every frame read back with the annotations of its image
//   1  a keypoints JSON of predictions (the official demo's layout), read with readKeypointsJson; what it
//      reads must write (keypointsJsonText) and read back the same
//   2  one frame's labels of a pose label set (keypoints/NAME.json, 2 keypoints), read with
//      readFrameLabels; what it reads must write (writeFrameLabels) and read back the same
// Every input must be read or refused with the reader's documented error (LabelSetError, ExportError);
// anything else (a crash, a sanitizer report, another exception, a broken promise) is a bug.

#include "fuzz_support.h"
#include "sapiens/common/log.h"
#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/io/export_error.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace {

namespace fs = std::filesystem;
using sapiens::fuzz::check;

const std::string& root() {
  static const std::string folder = [] {
    sapiens::log::setConsoleLevel(sapiens::log::Level::Off);
    const std::string dir = sapiens::fuzz::scratchDir("keypoints_import");
    fs::create_directories(dir + "/pictures");
    fs::create_directories(dir + "/pose/images");
    fs::create_directories(dir + "/pose/keypoints");
    const cv::Mat image(3, 4, CV_8UC3, cv::Scalar(10, 120, 230));
    if (!cv::imwrite(dir + "/pictures/a.png", image) || !cv::imwrite(dir + "/pose/images/a.png", image))
      sapiens::fuzz::die("cannot write the fixture pictures in " + dir);
    return dir;
  }();
  return folder;
}

// Equal, or both not finite (the writers turn any non-finite number into null, read back as NaN).
bool same(double a, double b) {
  return a == b || (!std::isfinite(a) && !std::isfinite(b));
}

void importCoco(const std::string& path) {
  const std::string destination = root() + "/imported";
  std::error_code ec;
  fs::remove_all(destination, ec);
  sapiens::LabelSet imported;
  try {
    imported = sapiens::importCocoKeypoints(path, root() + "/pictures", destination);
  } catch (const sapiens::LabelSetError&) {
    return;
  }
  const sapiens::CocoKeypointDataset coco = sapiens::readCocoKeypoints(path);  // it imported, so it reads
  std::map<std::int64_t, std::size_t> annotationsPerImage;
  for (const sapiens::CocoKeypointAnnotation& annotation : coco.annotations)
    ++annotationsPerImage[annotation.imageId];
  std::vector<std::size_t> expectedPeople;
  for (const sapiens::CocoImage& image : coco.images)
    if (annotationsPerImage.count(image.id) != 0) expectedPeople.push_back(annotationsPerImage[image.id]);

  const sapiens::LabelSet reopened = sapiens::openLabelSet(destination, sapiens::Task::Pose);
  check(reopened.frames.size() == expectedPeople.size(), "every annotated image is imported as one frame");
  for (std::size_t i = 0; i < reopened.frames.size(); ++i) {
    const sapiens::FrameLabels frame = sapiens::readFrameLabels(reopened, i);
    check(frame.people.size() == expectedPeople[i],
          "imported frame " + std::to_string(i) + " holds its image's annotations");
  }
}

void readPredictions(const std::string& path) {
  sapiens::KeypointPredictions first;
  try {
    first = sapiens::readKeypointsJson(path);
  } catch (const sapiens::ExportError&) {
    return;
  }
  check(first.numKeypoints >= 0, "num_keypoints is not negative");
  for (const sapiens::KeypointFrame& frame : first.frames)
    for (const sapiens::PoseInstance& instance : frame.instances)
      check(instance.keypoints.size() == static_cast<std::size_t>(first.numKeypoints) &&
                instance.scores.size() == instance.keypoints.size(),
            "every instance has num_keypoints keypoints and scores");
  const std::string copy = root() + "/predictions-copy.json";
  sapiens::fuzz::writeFile(copy, sapiens::keypointsJsonText(first));
  const sapiens::KeypointPredictions second = sapiens::readKeypointsJson(copy);
  check(first.video == second.video && first.note == second.note && first.imageWidth == second.imageWidth &&
            first.imageHeight == second.imageHeight && first.numKeypoints == second.numKeypoints &&
            same(first.keypointThreshold, second.keypointThreshold) &&
            first.frames.size() == second.frames.size(),
        "the predictions' header reads back the same");
  for (std::size_t f = 0; f < first.frames.size(); ++f) {
    const sapiens::KeypointFrame& a = first.frames[f];
    const sapiens::KeypointFrame& b = second.frames[f];
    check(a.imageName == b.imageName && a.instances.size() == b.instances.size(),
          "frame " + std::to_string(f) + " reads back the same");
    for (std::size_t i = 0; i < a.instances.size(); ++i) {
      const sapiens::PoseInstance& x = a.instances[i];
      const sapiens::PoseInstance& y = b.instances[i];
      bool equal = x.bboxSource == y.bboxSource && same(x.bbox.x1, y.bbox.x1) && same(x.bbox.y1, y.bbox.y1) &&
                   same(x.bbox.x2, y.bbox.x2) && same(x.bbox.y2, y.bbox.y2);
      for (std::size_t k = 0; equal && k < x.keypoints.size(); ++k)
        equal = same(x.keypoints[k][0], y.keypoints[k][0]) && same(x.keypoints[k][1], y.keypoints[k][1]) &&
                same(x.scores[k], y.scores[k]);
      check(equal, "frame " + std::to_string(f) + " instance " + std::to_string(i) + " reads back the same");
    }
  }
}

void readFrameKeypoints(const std::uint8_t* data, std::size_t size) {
  sapiens::LabelSet labels;
  labels.folder = root() + "/pose";
  labels.task = sapiens::Task::Pose;
  labels.classes = {{"left", {}, std::nullopt}, {"right", {}, std::nullopt}};
  labels.frames.push_back({"images/a.png", "", "keypoints/a.json", "", sapiens::FrameSplit::Auto});
  sapiens::fuzz::writeFile(labels.resolve("keypoints/a.json"), data, size);
  sapiens::FrameLabels frame;
  try {
    frame = sapiens::readFrameLabels(labels, 0);
  } catch (const sapiens::LabelSetError&) {
    return;
  }
  for (const sapiens::PersonLabel& person : frame.people) {
    check(person.keypoints.size() == 2, "a person has the set's 2 keypoints");
    for (const sapiens::KeypointLabel& k : person.keypoints)
      check(k.visibility >= 0 && k.visibility <= 2, "a keypoint's visibility is 0, 1 or 2");
  }
  sapiens::writeFrameLabels(labels, 0, frame);
  const sapiens::FrameLabels again = sapiens::readFrameLabels(labels, 0);
  check(again.people.size() == frame.people.size(), "the people read back");
  for (std::size_t p = 0; p < frame.people.size(); ++p) {
    const sapiens::PersonLabel& a = frame.people[p];
    const sapiens::PersonLabel& b = again.people[p];
    bool equal = a.bbox.has_value() == b.bbox.has_value();
    if (equal && a.bbox)
      equal = a.bbox->x1 == b.bbox->x1 && a.bbox->y1 == b.bbox->y1 && a.bbox->x2 == b.bbox->x2 &&
              a.bbox->y2 == b.bbox->y2;
    for (std::size_t k = 0; equal && k < a.keypoints.size(); ++k)
      equal = a.keypoints[k].x == b.keypoints[k].x && a.keypoints[k].y == b.keypoints[k].y &&
              a.keypoints[k].visibility == b.keypoints[k].visibility;
    check(equal, "person " + std::to_string(p) + " reads back the same");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string path = root() + "/input.json";
  switch (data[0] % 3) {
    case 0:
      sapiens::fuzz::writeFile(path, data + 1, size - 1);
      importCoco(path);
      break;
    case 1:
      sapiens::fuzz::writeFile(path, data + 1, size - 1);
      readPredictions(path);
      break;
    default:
      readFrameKeypoints(data + 1, size - 1);
      break;
  }
  return 0;
}
