// libFuzzer target: a label set's manifest (labelset.json) on arbitrary bytes, opened with openLabelSet and
// its first frames read with readFrameLabels. The folder holds one picture with a label of every kind
// (images/a.png, masks/a.png, keypoints/a.json with 2 keypoints, targets/a.npy), so manifests naming them
// get past the existence check into the label readers; an empty input leaves no manifest, which opens
// the folder as the official seg layout. Every input must open or be refused with LabelSetError; an opened
// set must save and load back unchanged, and each frame read must keep readFrameLabels' promises. Anything
// else (a crash, a sanitizer report, another exception) is a bug.

#include "fuzz_support.h"
#include "sapiens/common/log.h"
#include "sapiens/export/npy.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

namespace {

namespace fs = std::filesystem;
using sapiens::fuzz::check;

const std::string& labelFolder() {
  static const std::string folder = [] {
    sapiens::log::setConsoleLevel(sapiens::log::Level::Off);
    const std::string root = sapiens::fuzz::scratchDir("label_set");
    for (const char* sub : {"images", "masks", "keypoints", "targets"})
      fs::create_directories(root + "/" + sub);
    cv::Mat image(3, 4, CV_8UC3, cv::Scalar(10, 120, 230));
    cv::Mat mask = (cv::Mat_<std::uint8_t>(3, 4) << 0, 1, 2, 255, 0, 0, 1, 1, 2, 2, 255, 0);
    if (!cv::imwrite(root + "/images/a.png", image) || !cv::imwrite(root + "/masks/a.png", mask))
      sapiens::fuzz::die("cannot write the fixture pictures in " + root);
    sapiens::fuzz::writeFile(
        root + "/keypoints/a.json",
        R"({"instances": [{"bbox": [0, 0, 3, 2], "keypoints": [[1, 1, 2], [2.5, 0.5, 1]]},)"
        R"( {"keypoints": [[0, 0, 0], [3, 2, 2]]}]})");
    cv::Mat target(3, 4, CV_32FC3, cv::Scalar(0.25f, -0.5f, 1.0f));
    target.at<cv::Vec3f>(1, 2)[0] = std::numeric_limits<float>::quiet_NaN();
    sapiens::writeNpy(root + "/targets/a.npy", target);
    return root;
  }();
  return folder;
}

void checkSameSet(const sapiens::LabelSet& a, const sapiens::LabelSet& b) {
  check(a.task == b.task, "the task survives save and load");
  check(a.classes.size() == b.classes.size(), "the classes survive save and load");
  for (std::size_t i = 0; i < a.classes.size(); ++i) {
    check(a.classes[i].name == b.classes[i].name && a.classes[i].color == b.classes[i].color &&
              a.classes[i].weight == b.classes[i].weight,
          "class " + std::to_string(i) + " survives save and load");
  }
  check(a.frames.size() == b.frames.size(), "the frames survive save and load");
  for (std::size_t i = 0; i < a.frames.size(); ++i) {
    const sapiens::LabelledFrame& x = a.frames[i];
    const sapiens::LabelledFrame& y = b.frames[i];
    check(x.image == y.image && x.mask == y.mask && x.keypoints == y.keypoints && x.target == y.target &&
              x.split == y.split,
          "frame " + std::to_string(i) + " survives save and load");
  }
}

void checkFrame(const sapiens::LabelSet& labels, const sapiens::FrameLabels& frame) {
  check(!frame.image.empty() && frame.image.type() == CV_8UC3, "the picture is CV_8UC3");
  switch (labels.task) {
    case sapiens::Task::Seg:
      check(frame.mask.type() == CV_8UC1 && frame.mask.size() == frame.image.size(),
            "a seg mask is CV_8UC1 of the picture's size");
      break;
    case sapiens::Task::Pose:
      for (const sapiens::PersonLabel& person : frame.people) {
        check(person.keypoints.size() == sapiens::labelCount(labels), "a person has labelCount keypoints");
        if (person.bbox)
          check(person.bbox->x2 > person.bbox->x1 && person.bbox->y2 > person.bbox->y1 &&
                    std::isfinite(person.bbox->x1) && std::isfinite(person.bbox->x2) &&
                    std::isfinite(person.bbox->y1) && std::isfinite(person.bbox->y2),
                "a person's box is finite and not empty");
        for (const sapiens::KeypointLabel& k : person.keypoints)
          check(k.visibility >= 0 && k.visibility <= 2 &&
                    (k.visibility == 0 || (std::isfinite(k.x) && std::isfinite(k.y))),
                "a keypoint's visibility is 0..2 and a labelled one is finite");
      }
      break;
    default:
      check(frame.target.type() == CV_32FC3 && frame.target.size() == frame.image.size(),
            "a dense target is CV_32FC3 of the picture's size");
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& folder = labelFolder();
  const std::string manifest = folder + "/" + sapiens::kLabelSetManifest;
  std::error_code ec;
  fs::remove(manifest, ec);
  if (size > 0) sapiens::fuzz::writeFile(manifest, data, size);
  try {
    const sapiens::LabelSet labels = sapiens::openLabelSet(folder);
    check(labels.task != sapiens::Task::Backbone, "a label set has a task with a head");
    for (const sapiens::LabelledFrame& frame : labels.frames)
      check(!frame.image.empty(), "every frame names its picture");
    if (size > 0) {
      sapiens::saveLabelSet(labels);
      checkSameSet(labels, sapiens::loadLabelSet(folder));
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(labels.frames.size(), 8); ++i) {
      try {
        checkFrame(labels, sapiens::readFrameLabels(labels, i));
      } catch (const sapiens::LabelSetError&) {
      }
    }
  } catch (const sapiens::LabelSetError&) {
  }
  return 0;
}
