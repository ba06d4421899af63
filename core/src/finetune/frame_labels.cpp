#include "sapiens/finetune/frame_labels.h"

#include "result/json_support.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/export/npy.h"
#include "sapiens/io/export_error.h"
#include "sapiens/io/file_read.h"
#include "sapiens/media/image_io.h"
#include "sapiens/media/media_error.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cmath>
#include <filesystem>

namespace sapiens {

namespace fs = std::filesystem;
using json_support::Cursor;

namespace {

// The ExportError's reason without the path it starts with.
std::string reasonOf(const ExportError& error) {
  return std::string(error.what()).substr(error.path().size() + 2);
}

cv::Mat readMask(const std::string& path, const cv::Mat& image, std::size_t classes) {
  try {
    requireRegularFile(path, kMaxPictureFileBytes, "a mask picture");
  } catch (const FileReadError& error) {
    throw LabelSetError(path, error.reason());
  }
  cv::Mat mask = cv::imread(path, cv::IMREAD_UNCHANGED);
  if (mask.empty()) throw LabelSetError(path, "cannot be read as a picture");
  if (mask.type() != CV_8UC1) {
    throw LabelSetError(path, fmt::format("a mask must be an 8-bit single-channel PNG of class indices, this "
                                          "one has {} channel(s) of depth {}",
                                          mask.channels(), mask.depth() == CV_8U ? 8 : 16));
  }
  if (mask.size() != image.size()) {
    throw LabelSetError(path, fmt::format("mask is {}x{} but its image is {}x{} (width x height)", mask.cols,
                                          mask.rows, image.cols, image.rows));
  }
  for (int y = 0; y < mask.rows; ++y) {
    const std::uint8_t* row = mask.ptr<std::uint8_t>(y);
    for (int x = 0; x < mask.cols; ++x) {
      if (row[x] >= classes && row[x] != kIgnoreLabel) {
        throw LabelSetError(path,
                            fmt::format("class index {} at pixel ({}, {}) is out of range: the set has {} "
                                        "classes (0-{}; 255 = not labelled)",
                                        row[x], x, y, classes, classes - 1));
      }
    }
  }
  return mask;
}

std::vector<PersonLabel> readKeypointLabels(const std::string& path, std::size_t keypoints) {
  std::vector<PersonLabel> people;
  try {
    const nlohmann::json document = json_support::parseFile(path);
    const Cursor instances = Cursor(path, document)["instances"];
    for (std::size_t i = 0; i < instances.arraySize(); ++i) {
      const Cursor instance = instances[i];
      PersonLabel person;
      if (const auto bbox = instance.optional("bbox")) {
        bbox->arraySize(4);
        person.bbox =
            BoundingBox{static_cast<float>((*bbox)[0].number()), static_cast<float>((*bbox)[1].number()),
                        static_cast<float>((*bbox)[2].number()), static_cast<float>((*bbox)[3].number())};
        if (!person.bbox->isProper()) bbox->fail("the box must have finite x2 > x1 and y2 > y1");
      }
      const Cursor points = instance["keypoints"];
      points.arraySize(keypoints);
      for (std::size_t k = 0; k < keypoints; ++k) {
        const Cursor point = points[k];
        point.arraySize(3);
        KeypointLabel label{point[0].number(), point[1].number(), static_cast<int>(point[2].integer())};
        if (label.visibility < 0 || label.visibility > 2) point[2].fail("visibility must be 0, 1 or 2");
        if (label.visibility > 0 && !(std::isfinite(label.x) && std::isfinite(label.y)))
          point.fail("a labelled keypoint needs finite coordinates");
        person.keypoints.push_back(label);
      }
      people.push_back(std::move(person));
    }
  } catch (const ExportError& error) {
    throw LabelSetError(path, reasonOf(error));
  }
  return people;
}

cv::Mat readTarget(Task task, const std::string& path, const cv::Mat& image) {
  cv::Mat target;
  try {
    target = npyToMat(readNpy(path));
  } catch (const ExportError& error) {
    throw LabelSetError(path, reasonOf(error));
  } catch (const std::invalid_argument& error) {
    throw LabelSetError(path, error.what());
  }
  checkDenseTarget(task, target, path);
  if (target.size() != image.size()) {
    throw LabelSetError(path, fmt::format("target is {}x{} but its image is {}x{} (width x height)",
                                          target.cols, target.rows, image.cols, image.rows));
  }
  return target;
}

std::string defaultLabelPath(Task task, const std::string& stem) {
  switch (task) {
    case Task::Seg:
      return "masks/" + stem + ".png";
    case Task::Pose:
      return "keypoints/" + stem + ".json";
    default:
      return "targets/" + stem + ".npy";
  }
}

// The entry's member that holds the path of `task`'s label file.
std::string LabelledFrame::*labelPathMember(Task task) {
  return task == Task::Seg    ? &LabelledFrame::mask
         : task == Task::Pose ? &LabelledFrame::keypoints
                              : &LabelledFrame::target;
}

std::string& labelPathOf(Task task, LabelledFrame& entry) {
  return entry.*labelPathMember(task);
}

const std::string& labelPathOf(Task task, const LabelledFrame& entry) {
  return entry.*labelPathMember(task);
}

void writeLabelFile(const LabelSet& labels, const std::string& relative, const FrameLabels& frame) {
  fs::create_directories(fs::path(labels.resolve(relative)).parent_path());
  switch (labels.task) {
    case Task::Seg:
      writeLabelPng(labels.resolve(relative), frame.mask);
      return;
    case Task::Pose: {
      nlohmann::ordered_json instances = nlohmann::ordered_json::array();
      for (const PersonLabel& person : frame.people) {
        nlohmann::ordered_json entry;
        if (person.bbox) entry["bbox"] = {person.bbox->x1, person.bbox->y1, person.bbox->x2, person.bbox->y2};
        nlohmann::ordered_json points = nlohmann::ordered_json::array();
        for (const KeypointLabel& k : person.keypoints) points.push_back({k.x, k.y, k.visibility});
        entry["keypoints"] = std::move(points);
        instances.push_back(std::move(entry));
      }
      writeFileAtomically(labels.resolve(relative),
                          nlohmann::ordered_json{{"instances", instances}}.dump() + "\n");
      return;
    }
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
    case Task::Matting:
      writeNpy(labels.resolve(relative), frame.target);
      return;
    case Task::Backbone:
      break;
  }
  throw LabelSetError(labels.folder, "a label set needs a task with a head");
}

}  // namespace

std::size_t labelCount(const LabelSet& labels) {
  if (!labels.classes.empty()) return labels.classes.size();
  if (labels.task == Task::Seg) return seg29().size();
  if (labels.task == Task::Pose) return keypoints308().size();
  return labels.task == Task::Matting ? 1 : 3;
}

void checkDenseTarget(Task task, const cv::Mat& target, const std::string& path) {
  const int channels = task == Task::Matting ? 1 : 3;
  if (target.dims != 2 || target.channels() != channels || target.depth() != CV_32F) {
    throw LabelSetError(path,
                        fmt::format("a {} target must be a float32 {} array, this one has {} channel(s) of "
                                    "type {}",
                                    taskName(task), channels == 1 ? "(H, W)" : "(H, W, 3)", target.channels(),
                                    cv::typeToString(CV_MAT_DEPTH(target.type()))));
  }
  if (task != Task::Matting) return;
  cv::Mat finite = target == target;  // NaN (no label) compares unequal to itself
  double low = 0, high = 0;
  cv::minMaxLoc(target, &low, &high, nullptr, nullptr, finite);
  if (cv::countNonZero(finite) > 0 && (low < 0.0 || high > 1.0))
    throw LabelSetError(path,
                        fmt::format("an alpha target holds values from {} to {}, outside [0, 1]", low, high));
}

FrameLabels readFrameLabels(const LabelSet& labels, std::size_t index) {
  if (index >= labels.frames.size())
    throw LabelSetError(labels.manifestPath(),
                        fmt::format("no frame {} (it has {})", index, labels.frames.size()));
  const LabelledFrame& entry = labels.frames[index];
  FrameLabels frame;
  const std::string imagePath = labels.resolve(entry.image);
  try {
    frame.image = readImageBgr(imagePath);
  } catch (const MediaError& error) {
    throw LabelSetError(imagePath, std::string(error.what()).substr(error.path().size() + 2));
  }
  auto required = [&](const std::string& relative, const char* what) {
    if (relative.empty()) {
      throw LabelSetError(labels.manifestPath(), fmt::format("frame {} ({}) has no {} for the {} task", index,
                                                             entry.image, what, taskName(labels.task)));
    }
    return labels.resolve(relative);
  };
  switch (labels.task) {
    case Task::Seg:
      frame.mask = readMask(required(entry.mask, "mask"), frame.image, labelCount(labels));
      break;
    case Task::Pose:
      frame.people = readKeypointLabels(required(entry.keypoints, "keypoints"), labelCount(labels));
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
    case Task::Matting:
      frame.target = readTarget(labels.task, required(entry.target, "target"), frame.image);
      break;
    case Task::Backbone:
      break;
  }
  return frame;
}

LabelledFrame plannedFrame(const LabelSet& labels, const std::string& name, FrameSplit split) {
  LabelledFrame entry;
  entry.image = "images/" + name + ".png";
  entry.split = split;
  labelPathOf(labels.task, entry) = defaultLabelPath(labels.task, name);
  return entry;
}

void writeFrameFiles(const LabelSet& labels, const LabelledFrame& entry, const FrameLabels& frame) {
  std::vector<unsigned char> png;
  if (frame.image.empty() || !cv::imencode(".png", frame.image, png))
    throw LabelSetError(labels.resolve(entry.image), "cannot encode the picture as PNG");
  fs::create_directories(fs::path(labels.resolve(entry.image)).parent_path());
  writeFileAtomically(labels.resolve(entry.image),
                      std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
  writeLabelFile(labels, labelPathOf(labels.task, entry), frame);
}

std::size_t addFrame(LabelSet& labels, const std::string& name, const FrameLabels& frame, FrameSplit split) {
  LabelledFrame entry = plannedFrame(labels, name, split);
  writeFrameFiles(labels, entry, frame);
  labels.frames.push_back(std::move(entry));
  saveLabelSet(labels);
  return labels.frames.size() - 1;
}

void writeFrameLabels(LabelSet& labels, std::size_t index, const FrameLabels& frame) {
  if (index >= labels.frames.size())
    throw LabelSetError(labels.manifestPath(),
                        fmt::format("no frame {} (it has {})", index, labels.frames.size()));
  std::string& relative = labelPathOf(labels.task, labels.frames[index]);
  if (!relative.empty()) return writeLabelFile(labels, relative, frame);
  relative = defaultLabelPath(labels.task, fs::path(labels.frames[index].image).stem().string());
  writeLabelFile(labels, relative, frame);
  saveLabelSet(labels);
}

}  // namespace sapiens
