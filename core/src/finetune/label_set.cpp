#include "sapiens/finetune/label_set.h"

#include "result/json_support.h"
#include "sapiens/common/log.h"
#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/npy.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/io/export_error.h"
#include "sapiens/io/file_read.h"
#include "sapiens/media/image_io.h"
#include "sapiens/media/media_error.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <filesystem>
#include <map>
#include <set>

namespace sapiens {

namespace fs = std::filesystem;
using json_support::Cursor;

namespace {

inline constexpr const char* kFormatName = "sapiens2-labelset";
inline constexpr int kFormatVersion = 1;

FrameSplit parseSplit(const Cursor& cursor) {
  const std::string text = cursor.string();
  if (text == "train") return FrameSplit::Train;
  if (text == "val" || text == "validation") return FrameSplit::Validation;
  if (text == "auto") return FrameSplit::Auto;
  cursor.fail("split must be \"train\", \"val\" or \"auto\", not \"" + text + "\"");
}

std::string readOptionalString(const Cursor& frame, const char* key) {
  const std::optional<Cursor> value = frame.optional(key);
  return value ? value->string() : std::string();
}

void copyFile(const std::string& from, const std::string& to) {
  std::string bytes;
  try {
    bytes = readWholeFile(from, kMaxPictureFileBytes, "a picture or label file");
  } catch (const FileReadError& error) {
    throw LabelSetError(from, error.reason());
  }
  fs::create_directories(fs::path(to).parent_path());
  writeFileAtomically(to, bytes);
}

// Before each picture of an import: the import stops there when its caller asked it to.
void stopIfCancelled(const std::function<bool()>& isCancelled) {
  if (isCancelled && isCancelled()) throw LabelImportCancelled();
}

}  // namespace

std::string_view frameSplitName(FrameSplit split) {
  switch (split) {
    case FrameSplit::Train:
      return "train";
    case FrameSplit::Validation:
      return "val";
    case FrameSplit::Auto:
      break;
  }
  return "auto";
}

std::string LabelSet::manifestPath() const {
  return (fs::path(folder) / kLabelSetManifest).string();
}

std::string LabelSet::resolve(const std::string& relative) const {
  return (fs::path(folder) / relative).string();
}

LabelSet loadLabelSet(const std::string& folder) {
  LabelSet labels;
  labels.folder = folder;
  const std::string path = labels.manifestPath();
  if (!fs::exists(path)) throw LabelSetError(path, "no such file (not a label set)");
  try {
    const nlohmann::json document = json_support::parseFile(path);
    const Cursor root(path, document);
    if (const auto format = root.optional("format"); format && format->string() != kFormatName)
      format->fail(fmt::format("not a label set (format \"{}\")", format->string()));
    if (const auto version = root.optional("version"); version && version->integer() > kFormatVersion)
      version->fail(fmt::format("version {} is newer than this program reads ({})", version->integer(),
                                kFormatVersion));
    const Cursor taskCursor = root["task"];
    const std::optional<Task> task = parseTask(taskCursor.string());
    if (!task || *task == Task::Backbone) taskCursor.fail("unknown task \"" + taskCursor.string() + "\"");
    labels.task = *task;
    if (const auto classes = root.optional("classes")) {
      for (std::size_t i = 0; i < classes->arraySize(); ++i) {
        const Cursor entry = (*classes)[i];
        LabelClass c;
        c.name = entry["name"].string();
        if (const auto color = entry.optional("color")) c.color = json_support::readRgb(*color);
        if (const auto weight = entry.optional("weight")) c.weight = weight->number();
        labels.classes.push_back(std::move(c));
      }
      if (labels.task == Task::Seg && labels.classes.size() > kIgnoreLabel)
        classes->fail(fmt::format("{} classes; masks hold at most {}", labels.classes.size(), kIgnoreLabel));
    }
    const Cursor frames = root["frames"];
    for (std::size_t i = 0; i < frames.arraySize(); ++i) {
      const Cursor entry = frames[i];
      LabelledFrame frame;
      frame.image = entry["image"].string();
      if (frame.image.empty()) entry["image"].fail("a frame needs a picture, not an empty path");
      frame.mask = readOptionalString(entry, "mask");
      frame.keypoints = readOptionalString(entry, "keypoints");
      frame.target = readOptionalString(entry, "target");
      if (const auto split = entry.optional("split")) frame.split = parseSplit(*split);
      labels.frames.push_back(std::move(frame));
    }
  } catch (const ExportError& error) {
    throw LabelSetError(path, error.what() + error.path().size() + 2);
  }
  for (std::size_t i = 0; i < labels.frames.size(); ++i) {
    const LabelledFrame& frame = labels.frames[i];
    for (const std::string* file : {&frame.image, &frame.mask, &frame.keypoints, &frame.target}) {
      std::error_code ec;  // a name the file system refuses (too long, ...) is an error, not an exception
      if (!file->empty() && !fs::exists(labels.resolve(*file), ec)) {
        throw LabelSetError(labels.resolve(*file),
                            fmt::format("{} (frame {} of {})", ec ? ec.message() : "missing", i, path));
      }
    }
  }
  return labels;
}

void saveLabelSet(const LabelSet& labels) {
  nlohmann::ordered_json root;
  root["format"] = kFormatName;
  root["version"] = kFormatVersion;
  root["task"] = std::string(taskName(labels.task));
  if (!labels.classes.empty()) {
    nlohmann::ordered_json classes = nlohmann::ordered_json::array();
    for (const LabelClass& c : labels.classes) {
      nlohmann::ordered_json entry{{"name", c.name}, {"color", {c.color[0], c.color[1], c.color[2]}}};
      if (c.weight) entry["weight"] = *c.weight;
      classes.push_back(std::move(entry));
    }
    root["classes"] = std::move(classes);
  }
  nlohmann::ordered_json frames = nlohmann::ordered_json::array();
  for (const LabelledFrame& frame : labels.frames) {
    nlohmann::ordered_json entry{{"image", frame.image}};
    if (!frame.mask.empty()) entry["mask"] = frame.mask;
    if (!frame.keypoints.empty()) entry["keypoints"] = frame.keypoints;
    if (!frame.target.empty()) entry["target"] = frame.target;
    if (frame.split != FrameSplit::Auto) entry["split"] = std::string(frameSplitName(frame.split));
    frames.push_back(std::move(entry));
  }
  root["frames"] = std::move(frames);
  std::error_code ec;
  fs::create_directories(labels.folder, ec);
  if (ec) throw LabelSetError(labels.folder, "cannot create the folder: " + ec.message());
  writeFileAtomically(labels.manifestPath(), root.dump(1) + "\n");
}

namespace {

LabelSet readOfficialSegLayout(const std::string& folder) {
  const fs::path imagesDir = fs::path(folder) / "images";
  const fs::path masksDir = fs::path(folder) / "masks";
  if (!fs::is_directory(imagesDir) || !fs::is_directory(masksDir)) {
    throw LabelSetError(folder, fmt::format("neither a label set ({} is missing) nor the official layout "
                                            "(images/ and masks/ folders)",
                                            kLabelSetManifest));
  }
  std::map<std::string, std::string> masksByStem;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(masksDir, ec)) {
    std::error_code entryError;
    if (entry.is_regular_file(entryError) && entry.path().extension() == ".png")
      masksByStem[entry.path().stem().string()] = entry.path().filename().string();
  }
  if (ec) throw LabelSetError(masksDir.string(), "cannot be listed: " + ec.message());
  std::vector<std::string> images;
  try {
    images = listImages(imagesDir.string(), /*recursive=*/false);
  } catch (const MediaError& error) {
    throw LabelSetError(imagesDir.string(), error.what());
  }
  LabelSet labels;
  labels.folder = folder;
  labels.task = Task::Seg;
  std::vector<std::string> unpaired;
  for (const std::string& image : images) {
    const fs::path imagePath(image);
    const auto mask = masksByStem.find(imagePath.stem().string());
    if (mask == masksByStem.end()) {
      unpaired.push_back(imagePath.filename().string());
      continue;
    }
    LabelledFrame frame;
    frame.image = "images/" + imagePath.filename().string();
    frame.mask = "masks/" + mask->second;
    labels.frames.push_back(std::move(frame));
  }
  if (!unpaired.empty()) {
    logger().warn("{}: {} picture(s) without a mask of the same stem in masks/ are left out (first: {})",
                  folder, unpaired.size(), unpaired.front());
  }
  if (labels.frames.empty())
    throw LabelSetError(folder, "no picture in images/ has a mask of the same stem in masks/ (a PNG)");
  return labels;
}

}  // namespace

LabelSet openLabelSet(const std::string& folder, std::optional<Task> expectedTask) {
  if (!fs::is_directory(folder)) throw LabelSetError(folder, "no such folder");
  LabelSet labels =
      fs::exists(fs::path(folder) / kLabelSetManifest) ? loadLabelSet(folder) : readOfficialSegLayout(folder);
  if (expectedTask && *expectedTask != labels.task) {
    throw LabelSetError(
        folder, fmt::format("holds {} labels, not {}", taskName(labels.task), taskName(*expectedTask)));
  }
  return labels;
}

LabelSet importOfficialSegLayout(const std::string& sourceFolder, const std::string& destination,
                                 const std::function<bool()>& isCancelled) {
  const LabelSet source = readOfficialSegLayout(sourceFolder);
  LabelSet labels;
  labels.folder = destination;
  labels.task = Task::Seg;
  for (const LabelledFrame& frame : source.frames) {
    stopIfCancelled(isCancelled);
    copyFile(source.resolve(frame.image), labels.resolve(frame.image));
    copyFile(source.resolve(frame.mask), labels.resolve(frame.mask));
    labels.frames.push_back(frame);
  }
  saveLabelSet(labels);
  return labels;
}

namespace {

cv::Mat readDenseTargetFile(Task task, const fs::path& path) {
  cv::Mat target;
  const std::string extension = path.extension().string();
  if (extension == ".npy") {
    try {
      target = npyToMat(readNpy(path.string()));
    } catch (const ExportError& error) {
      throw LabelSetError(path.string(), error.what() + error.path().size() + 2);
    }
  } else {
    try {
      requireRegularFile(path.string(), kMaxPictureFileBytes, "a dense target picture");
      target = cv::imread(path.string(), cv::IMREAD_UNCHANGED);
    } catch (const FileReadError& error) {
      throw LabelSetError(path.string(), error.reason());
    } catch (const cv::Exception& error) {
      throw LabelSetError(path.string(), "OpenCV cannot read it: " + error.msg);
    }
    if (target.empty())
      throw LabelSetError(path.string(),
                          "cannot be read as OpenEXR (this OpenCV may have it switched off: "
                          "OPENCV_IO_ENABLE_OPENEXR=1), or the file is damaged");
    if (target.channels() == 3) cv::cvtColor(target, target, cv::COLOR_BGR2RGB);  // OpenCV reads B, G, R
  }
  checkDenseTarget(task, target, path.string());
  return target;
}

}  // namespace

const std::vector<Task>& denseTargetTasks() {
  static const std::vector<Task> tasks = {Task::Normal, Task::Albedo, Task::Pointmap, Task::Matting};
  return tasks;
}

LabelSet importDenseTargets(Task task, const std::string& imageFolder, const std::string& targetFolder,
                            const std::string& destination, const std::function<bool()>& isCancelled) {
  if (std::find(denseTargetTasks().begin(), denseTargetTasks().end(), task) == denseTargetTasks().end())
    throw LabelSetError(targetFolder, fmt::format("dense targets are for {}, not {}",
                                                  taskNames(denseTargetTasks(), ", "), taskName(task)));
  std::map<std::string, fs::path> targetsByStem;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(targetFolder, ec)) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() && (extension == ".npy" || extension == ".exr"))
      targetsByStem.emplace(entry.path().stem().string(), entry.path());
  }
  if (ec) throw LabelSetError(targetFolder, "cannot list the folder: " + ec.message());
  std::vector<std::string> images;
  try {
    images = listImages(imageFolder, /*recursive=*/false);
  } catch (const MediaError& error) {
    throw LabelSetError(imageFolder, error.what());
  }
  // Every pair is read and checked before anything is written: a bad target leaves no half-made set.
  std::vector<std::pair<std::string, fs::path>> pairs;
  std::size_t unpaired = 0;
  for (const std::string& image : images) {
    const auto target = targetsByStem.find(fs::path(image).stem().string());
    if (target == targetsByStem.end())
      ++unpaired;
    else
      pairs.emplace_back(image, target->second);
  }
  const auto readPair = [task, &isCancelled](const std::string& image, const fs::path& targetPath) {
    stopIfCancelled(isCancelled);
    FrameLabels frame;
    try {
      frame.image = readImageBgr(image);
    } catch (const MediaError& error) {
      throw LabelSetError(image, error.what());
    }
    frame.target = readDenseTargetFile(task, targetPath);
    if (frame.target.size() != frame.image.size()) {
      throw LabelSetError(
          targetPath.string(),
          fmt::format("target is {}x{} but its picture {} is {}x{} (width x height)", frame.target.cols,
                      frame.target.rows, fs::path(image).filename().string(), frame.image.cols,
                      frame.image.rows));
    }
    return frame;
  };
  for (const auto& [image, target] : pairs) readPair(image, target);
  LabelSet labels;
  labels.folder = destination;
  labels.task = task;
  for (const auto& [image, target] : pairs)
    addFrame(labels, fs::path(image).stem().string(), readPair(image, target));
  if (unpaired > 0)
    logger().warn("{}: {} picture(s) without a target of the same stem in {} are left out", imageFolder,
                  unpaired, targetFolder);
  if (labels.frames.empty())
    throw LabelSetError(targetFolder,
                        fmt::format("no picture in {} has a target of the same stem here (.npy or "
                                    ".exr)",
                                    imageFolder));
  saveLabelSet(labels);
  return labels;
}

void exportOfficialSegLayout(const LabelSet& labels, const std::string& destination) {
  if (labels.task != Task::Seg)
    throw LabelSetError(labels.folder, fmt::format("holds {} labels, not seg", taskName(labels.task)));
  for (const LabelledFrame& frame : labels.frames) {
    const fs::path image(frame.image);
    copyFile(labels.resolve(frame.image), (fs::path(destination) / "images" / image.filename()).string());
    if (!frame.mask.empty()) {
      const std::string mask = (fs::path(destination) / "masks" / image.stem()).string() + ".png";
      copyFile(labels.resolve(frame.mask), mask);
    }
  }
}

LabelSet importCocoKeypoints(const std::string& cocoPath, const std::string& imageFolder,
                             const std::string& destination, const std::function<bool()>& isCancelled) {
  CocoKeypointDataset coco;
  try {
    coco = readCocoKeypoints(cocoPath);
  } catch (const ExportError& error) {
    throw LabelSetError(cocoPath, error.what() + error.path().size() + 2);
  }
  LabelSet labels;
  labels.folder = destination;
  labels.task = Task::Pose;
  for (const std::string& name : coco.keypointNames) labels.classes.push_back({name, {}, std::nullopt});
  // Every person of a set has its keypoint count (the names', or the released model's without names).
  const std::size_t keypointCount = labelCount(labels);
  std::map<std::int64_t, std::vector<const CocoKeypointAnnotation*>> byImage;
  for (const CocoKeypointAnnotation& annotation : coco.annotations) {
    if (annotation.keypoints.size() != keypointCount) {
      throw LabelSetError(cocoPath,
                          fmt::format("annotation {} has {} keypoints, not {} ({})", annotation.id,
                                      annotation.keypoints.size(), keypointCount,
                                      coco.keypointNames.empty() ? "no keypoint names: the released model's"
                                                                 : "the person category's keypoint names"));
    }
    byImage[annotation.imageId].push_back(&annotation);
  }
  std::set<std::string> names;  // images of the same stem from different folders get NAME_2, NAME_3, ...
  for (const CocoImage& image : coco.images) {
    const auto annotations = byImage.find(image.id);
    if (annotations == byImage.end()) continue;
    stopIfCancelled(isCancelled);
    FrameLabels frame;
    const std::string imagePath = (fs::path(imageFolder) / image.fileName).string();
    try {
      frame.image = readImageBgr(imagePath);
    } catch (const MediaError& error) {
      throw LabelSetError(imagePath, fmt::format("{} (image {} of {})", error.what(), image.id, cocoPath));
    }
    for (const CocoKeypointAnnotation* annotation : annotations->second) {
      PersonLabel person;
      // Tools write [0, 0, 0, 0] for a person without a box: it gets the default (the keypoints' box).
      if (annotation->bbox.isProper()) person.bbox = annotation->bbox;
      for (std::size_t k = 0; k < annotation->keypoints.size(); ++k) {
        person.keypoints.push_back(
            {annotation->keypoints[k][0], annotation->keypoints[k][1], annotation->visibility[k]});
      }
      frame.people.push_back(std::move(person));
    }
    const std::string stem = fs::path(image.fileName).stem().string();
    std::string name = stem;
    for (int n = 2; !names.insert(name).second; ++n) name = stem + "_" + std::to_string(n);
    addFrame(labels, name, frame);
  }
  saveLabelSet(labels);
  return labels;
}

void exportCocoKeypoints(const LabelSet& labels, const std::string& cocoPath) {
  if (labels.task != Task::Pose)
    throw LabelSetError(labels.folder, fmt::format("holds {} labels, not pose", taskName(labels.task)));
  nlohmann::ordered_json images = nlohmann::ordered_json::array();
  nlohmann::ordered_json annotations = nlohmann::ordered_json::array();
  std::int64_t annotationId = 1;
  for (std::size_t i = 0; i < labels.frames.size(); ++i) {
    const FrameLabels frame = readFrameLabels(labels, i);
    const auto imageId = static_cast<std::int64_t>(i + 1);
    images.push_back({{"id", imageId},
                      {"file_name", labels.frames[i].image},
                      {"width", frame.image.cols},
                      {"height", frame.image.rows}});
    for (const PersonLabel& person : frame.people) {
      nlohmann::ordered_json keypoints = nlohmann::ordered_json::array();
      int labelled = 0;
      for (const KeypointLabel& k : person.keypoints) {
        const bool present = k.visibility > 0;
        keypoints.push_back(present ? k.x : 0.0);
        keypoints.push_back(present ? k.y : 0.0);
        keypoints.push_back(k.visibility);
        labelled += present ? 1 : 0;
      }
      const BoundingBox box = person.bbox.value_or(BoundingBox{});
      annotations.push_back({{"id", annotationId++},
                             {"image_id", imageId},
                             {"category_id", 1},
                             {"bbox", {box.x1, box.y1, box.width(), box.height()}},
                             {"area", box.width() * box.height()},
                             {"iscrowd", 0},
                             {"num_keypoints", labelled},
                             {"keypoints", std::move(keypoints)}});
    }
  }
  const std::size_t count = labelCount(labels);
  std::vector<std::string> names;
  for (std::size_t k = 0; k < count; ++k)
    names.push_back(k < labels.classes.size() ? labels.classes[k].name : keypoints308().names.at(k));
  nlohmann::ordered_json root;
  root["images"] = std::move(images);
  root["annotations"] = std::move(annotations);
  root["categories"] = {
      {{"id", 1}, {"name", "person"}, {"keypoints", names}, {"skeleton", nlohmann::json::array()}}};
  writeFileAtomically(cocoPath, root.dump() + "\n");
}

}  // namespace sapiens
