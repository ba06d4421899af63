#pragma once
// A label set: a folder holding a manifest (labelset.json), the pictures and their labels, the unit that
// fine-tuning trains on and that labelling tools edit. Layout (paths in the manifest are relative):
//
//   labelset.json   {"format": "sapiens2-labelset", "version": 1, "task": "seg",
//                    "classes": [{"name": "Background", "color": [50, 50, 50], "weight": 0.1}, ...],
//                    "frames": [{"image": "images/a.png", "mask": "masks/a.png", "split": "train"}, ...]}
//   images/         pictures (any format readImageBgr reads)
//   masks/          seg: 8-bit single-channel PNG of class indices, 255 = not labelled
//   keypoints/      pose: {"instances": [{"bbox": [x1, y1, x2, y2]?, "keypoints": [[x, y, v], ...]}]},
//                   v as COCO: 0 not labelled, 1 labelled but hidden, 2 visible
//   targets/        normal / albedo / pointmap: .npy (H, W, 3) float32 in the picture's pixel grid;
//                   non-finite values mark pixels without a target. Normal: unit (x, y, z); albedo: RGB in
//                   [0, 1]; pointmap: metric (X, Y, Z) in the camera frame (x right, y down, z forward).
//
// Every write goes through AtomicFile: a killed process leaves the previous file or the new one.

#include "sapiens/io/atomic_file.h"
#include "sapiens/model/task.h"
#include "sapiens/result/rgb.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sapiens {

/// Anything wrong with a label set; the message names the file (and the key or frame) concerned.
class LabelSetError : public IoError {
 public:
  LabelSetError(const std::string& path, const std::string& reason)
      : IoError(path + ": " + reason), path_(path) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// An import stopped because its caller asked it to (`isCancelled` returned true): not a failure. It stops
/// before the next picture; what it wrote before that stays (COCO and dense targets list those frames in
/// the destination's manifest, the seg layout writes its manifest only at the end).
class LabelImportCancelled : public std::runtime_error {
 public:
  LabelImportCancelled() : std::runtime_error("the import was cancelled") {}
};

inline constexpr const char* kLabelSetManifest = "labelset.json";

struct LabelClass {
  std::string name;
  Rgb color{};
  std::optional<double>
      weight;  ///< seg cross-entropy weight; default: seg29's when the classes are seg29's, else 1
};

enum class FrameSplit { Auto, Train, Validation };

struct LabelledFrame {
  std::string image;      ///< relative to the label set's folder
  std::string mask;       ///< seg
  std::string keypoints;  ///< pose
  std::string target;     ///< normal, albedo, pointmap
  FrameSplit split = FrameSplit::Auto;
};

struct LabelSet {
  std::string folder;  ///< absolute or relative to the working directory
  Task task = Task::Seg;
  /// Seg: the classes, index = mask value. Pose: the keypoint names (colours unused). Empty = the
  /// released model's (seg29 / keypoints308).
  std::vector<LabelClass> classes;
  std::vector<LabelledFrame> frames;

  std::string manifestPath() const;
  /// folder + "/" + relative
  std::string resolve(const std::string& relative) const;
};

/// Reads `folder`/labelset.json and checks that every referenced file exists. Throws LabelSetError.
LabelSet loadLabelSet(const std::string& folder);
/// Writes the manifest atomically (creating the folder when needed).
void saveLabelSet(const LabelSet& labels);

/// `folder` holding labelset.json, or a bare official seg layout: images/ and masks/ whose files pair by
/// stem (a.jpg with a.png), read in place (nothing is written). Throws LabelSetError naming what is
/// missing or unpaired.
LabelSet openLabelSet(const std::string& folder, std::optional<Task> expectedTask = std::nullopt);

// The imports poll `isCancelled` (any thread may make it true) before each picture and throw
// LabelImportCancelled once it is.

/// The official seg layout as a label set of ours in `destination` (files copied, manifest written).
LabelSet importOfficialSegLayout(const std::string& sourceFolder, const std::string& destination,
                                 const std::function<bool()>& isCancelled = {});
/// A COCO keypoints file (images resolved against `imageFolder`) as a pose label set in `destination`.
LabelSet importCocoKeypoints(const std::string& cocoPath, const std::string& imageFolder,
                             const std::string& destination, const std::function<bool()>& isCancelled = {});
/// The tasks whose labels are dense targets: normal, albedo, pointmap, matting.
const std::vector<Task>& denseTargetTasks();
/// Dense targets for pictures, as a label set of ours in `destination`: each picture in `imageFolder`
/// pairs with the file of the same stem in `targetFolder`, an .npy (H, W, 3) float32 array or an .exr with
/// channels R, G, B = x, y, z (matting: (H, W) alpha in [0, 1], or a one-channel .exr), in the picture's
/// pixel grid (non-finite values mark pixels without a target). Pictures without a target are left out
/// (logged). Throws LabelSetError naming the file for a target of another size or shape, an unreadable file,
/// or no pair at all.
LabelSet importDenseTargets(Task task, const std::string& imageFolder, const std::string& targetFolder,
                            const std::string& destination, const std::function<bool()>& isCancelled = {});
/// Seg label set -> images/ + masks/ (masks as PNG named by the image's stem) in `destination`.
void exportOfficialSegLayout(const LabelSet& labels, const std::string& destination);
/// Pose label set -> one COCO keypoints file (image file names relative to the label set's folder).
void exportCocoKeypoints(const LabelSet& labels, const std::string& cocoPath);

std::string_view frameSplitName(FrameSplit split);

}  // namespace sapiens
