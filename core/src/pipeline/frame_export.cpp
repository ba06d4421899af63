#include "sapiens/pipeline/frame_export.h"

#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/export_error.h"
#include "sapiens/export/exr.h"
#include "sapiens/export/image_file.h"
#include "sapiens/export/keypoint_metadata.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/export/npy.h"
#include "sapiens/export/overlay.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/export/seg_classes.h"
#include "sapiens/model/demo_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace sapiens {
namespace fs = std::filesystem;

namespace {

// Whether drawing on `picture` changes no one else's pixels: it owns its buffer and no other header
// shares it.
bool drawableInPlace(const cv::Mat& picture) {
  return picture.u != nullptr && picture.u->refcount == 1;
}

// `drawOnPicture`: the pose overlay may be drawn on bgr itself (it is written last).
void writeFrameFiles(const FrameResult& frame, const cv::Mat& bgr, bool drawOnPicture,
                     const std::string& stem, const std::string& imageName, const FrameExportOptions& options,
                     std::map<std::string, std::string>& outputs) {
  fs::create_directories(fs::path(stem).parent_path());
  auto out = [&](const std::string& kind, const std::string& suffix) {
    std::string path = stem + suffix;
    outputs[kind] = path;
    return path;
  };
  auto note = [&](Task task) {
    const bool demo =
        std::find(options.demoTasks.begin(), options.demoTasks.end(), task) != options.demoTasks.end();
    return demo ? std::string(demo::kNotice) : std::string();
  };
  if (frame.has(Task::Seg)) {
    writeLabelPng(out("seg", ".seg.png"), frame.segLabels, note(Task::Seg));
    if (options.overlays)
      writeSegmentationOverlay(out("seg_overlay", ".seg_overlay.png"), bgr, frame.segLabels, seg29(),
                               note(Task::Seg));
  }
  if (frame.has(Task::Pose) && options.poseFiles) {
    KeypointPredictions predictions;
    predictions.imageHeight = frame.height;
    predictions.imageWidth = frame.width;
    predictions.numKeypoints = static_cast<int>(keypoints308().size());
    predictions.keypointThreshold = options.keypointThreshold;
    predictions.frames.push_back({imageName, frame.poses});
    predictions.note = note(Task::Pose);
    writeKeypointsJson(out("pose", ".pose.json"), predictions);
    writeCocoKeypoints(out("pose_coco", ".pose.coco.json"), predictions, keypoints308());
  }
  const cv::Mat foreground = frame.has(Task::Seg) ? frame.segLabels : cv::Mat();
  if (frame.has(Task::Normal)) {
    writeNormalPng(out("normal", ".normal.png"), frame.normal, foreground, note(Task::Normal));
    writeNpy(out("normal_npy", ".normal.npy"), frame.normal);
  }
  if (frame.has(Task::Albedo)) {
    writeAlbedoPng(out("albedo", ".albedo.png"), frame.albedo, foreground, note(Task::Albedo));
    writeNpy(out("albedo_npy", ".albedo.npy"), frame.albedo);
  }
  if (frame.has(Task::Pointmap)) {
    writeNpy(out("pointmap_npy", ".pointmap.npy"), frame.pointmap);
    writeDepthPng(out("depth", ".depth.png"), frame.pointmap, foreground, options.depthRange,
                  note(Task::Pointmap));
    if (exrWritingSupported()) writeExr(out("pointmap_exr", ".pointmap.exr"), frame.pointmap);
    PointCloudOptions cloudOptions;
    cloudOptions.withFaces = options.plyFaces;
    writePly(out("ply", ".ply"), buildPointCloud(frame, bgr, cloudOptions), options.plyEncoding,
             note(Task::Pointmap));
  }
  if (frame.has(Task::Pose) && options.poseFiles && options.overlays) {
    // Last: it may draw on the picture itself, which nothing above reads after it.
    cv::Mat overlay = drawOnPicture && drawableInPlace(bgr) ? bgr : bgr.clone();
    drawPoses(overlay, frame.poses, keypoints308(),
              poseDrawStyleFor(overlay.size(), options.keypointThreshold));
    writeImageFile(out("pose_overlay", ".pose_overlay.png"), overlay, {}, note(Task::Pose));
  }
}

}  // namespace

namespace {

std::map<std::string, std::string> exportFrameFiles(const FrameResult& frame, const cv::Mat& bgr,
                                                    bool drawOnPicture, const std::string& stem,
                                                    const std::string& imageName,
                                                    const FrameExportOptions& options) {
  std::map<std::string, std::string> outputs;
  try {
    writeFrameFiles(frame, bgr, drawOnPicture, stem, imageName, options, outputs);
  } catch (const std::exception& e) {
    // The files already written for this frame go too (a full disk gets their space back): a folder
    // holds no output that its manifest does not list.
    std::size_t removed = 0;
    for (const auto& [kind, path] : outputs) {
      std::error_code ec;
      if (fs::remove(path, ec)) ++removed;
    }
    if (removed == 0) throw;
    throw IoError(fmt::format("{} (the {} file(s) already written for it were removed)", e.what(), removed));
  }
  return outputs;
}

}  // namespace

std::map<std::string, std::string> exportFrame(const FrameResult& frame, const cv::Mat& bgr,
                                               const std::string& stem, const std::string& imageName,
                                               const FrameExportOptions& options) {
  return exportFrameFiles(frame, bgr, false, stem, imageName, options);
}

std::map<std::string, std::string> exportFrameConsumingPicture(const FrameResult& frame, cv::Mat&& picture,
                                                               const std::string& stem,
                                                               const std::string& imageName,
                                                               const FrameExportOptions& options) {
  const cv::Mat owned = std::move(picture);
  return exportFrameFiles(frame, owned, true, stem, imageName, options);
}

cv::Mat annotatedPicture(const FrameResult& frame, const cv::Mat& bgr, float keypointThreshold) {
  const cv::Mat foreground = frame.has(Task::Seg) ? frame.segLabels : cv::Mat();
  if (!frame.has(Task::Seg) && !frame.has(Task::Pose)) {
    if (frame.has(Task::Normal)) return normalMapImage(frame.normal, foreground);
    if (frame.has(Task::Albedo)) return albedoImage(frame.albedo, foreground);
    if (frame.has(Task::Pointmap))
      return depthImage(frame.pointmap, foreground, foregroundDepthRange(frame.pointmap, foreground));
    return bgr.clone();
  }
  cv::Mat picture = frame.has(Task::Seg) ? segmentationOverlay(bgr, frame.segLabels, seg29()) : bgr.clone();
  if (frame.has(Task::Pose))
    drawPoses(picture, frame.poses, keypoints308(), poseDrawStyleFor(picture.size(), keypointThreshold));
  return picture;
}

}  // namespace sapiens
