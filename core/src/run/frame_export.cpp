#include "sapiens/run/frame_export.h"

#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/converted_keypoints.h"
#include "sapiens/export/exr.h"
#include "sapiens/export/glb.h"
#include "sapiens/export/image_file.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/export/matte_png.h"
#include "sapiens/export/npy.h"
#include "sapiens/export/overlay.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/io/export_error.h"
#include "sapiens/model/demo_weights.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace sapiens {
namespace fs = std::filesystem;

namespace {

// Whether drawing on `picture` changes no one else's pixels: it owns its buffer and no other header
// shares it.
bool drawableInPlace(const cv::Mat& picture) {
  return picture.u != nullptr && picture.u->refcount == 1;
}

std::string noteFor(Task task, const FrameExportOptions& options) {
  const bool demo =
      std::find(options.demoTasks.begin(), options.demoTasks.end(), task) != options.demoTasks.end();
  return demo ? std::string(demo::kNotice) : std::string();
}

KeypointPredictions keypointPredictions(const FrameResult& frame, const std::string& imageName,
                                        const FrameExportOptions& options) {
  KeypointPredictions predictions;
  predictions.imageHeight = frame.height;
  predictions.imageWidth = frame.width;
  // A fine-tuned head may have its own keypoints.
  predictions.numKeypoints = frame.poses.empty() ? static_cast<int>(keypoints308().size())
                                                 : static_cast<int>(frame.poses.front().keypoints.size());
  predictions.keypointThreshold = options.keypointThreshold;
  predictions.frames.push_back({imageName, frame.poses});
  predictions.note = noteFor(Task::Pose, options);
  return predictions;
}

// The layout a converted keypoint file is written in.
KeypointFormat convertedFormat(ResultFile file) {
  return file == ResultFile::PoseCoco17      ? KeypointFormat::Coco17
         : file == ResultFile::PoseWholeBody ? KeypointFormat::CocoWholeBody
                                             : KeypointFormat::OpenPose;
}

// `drawOnPicture`: the pose overlay may be drawn on bgr itself.
void writeOne(ResultFile file, const std::string& path, const FrameResult& frame, const cv::Mat& bgr,
              bool drawOnPicture, const std::string& imageName, const FrameExportOptions& options) {
  const ResultFileInfo& info = resultFileInfo(file);
  if (!frame.has(info.task))
    throw ExportError(path, fmt::format("there is no {} result to write", taskName(info.task)));
  const std::string note = noteFor(info.task, options);
  const cv::Mat foreground = frame.has(Task::Seg) ? frame.segLabels : cv::Mat();
  switch (file) {
    case ResultFile::Seg:
      return writeLabelPng(path, frame.segLabels, note);
    case ResultFile::SegOverlay:
      return writeSegmentationOverlay(path, bgr, frame.segLabels, seg29(), note);
    case ResultFile::Pose:
      return writeKeypointsJson(path, keypointPredictions(frame, imageName, options));
    case ResultFile::PoseCoco:
      return writeCocoKeypoints(path, keypointPredictions(frame, imageName, options), keypoints308());
    case ResultFile::PoseCoco17:
    case ResultFile::PoseWholeBody:
    case ResultFile::PoseOpenPose:
      return writeConvertedKeypoints(path, convertedFormat(file),
                                     keypointPredictions(frame, imageName, options));
    case ResultFile::Normal:
      return writeNormalPng(path, frame.normal, foreground, note);
    case ResultFile::NormalNpy:
      return writeNpy(path, frame.normal);
    case ResultFile::Albedo:
      return writeAlbedoPng(path, frame.albedo, foreground, note);
    case ResultFile::AlbedoNpy:
      return writeNpy(path, frame.albedo);
    case ResultFile::PointmapNpy:
      return writeNpy(path, frame.pointmap);
    case ResultFile::Depth:
      return writeDepthPng(path, frame.pointmap, foreground, options.depthRange, note);
    case ResultFile::PointmapExr:
      return writeExr(path, frame.pointmap);
    case ResultFile::Ply: {
      PointCloudOptions cloudOptions;
      cloudOptions.withFaces = options.plyFaces;
      return writePly(path, buildPointCloud(frame, bgr, cloudOptions), options.plyEncoding, note);
    }
    case ResultFile::Glb: {
      PointCloudOptions meshOptions;
      meshOptions.withFaces = true;
      return writeGlb(path, buildPointCloud(frame, bgr, meshOptions), note);
    }
    case ResultFile::Alpha:
      return writeAlphaPng(path, frame.alpha, note);
    case ResultFile::AlphaNpy:
      return writeNpy(path, frame.alpha);
    case ResultFile::Cutout:
      return writeCutoutPng(path, bgr, frame.alpha, note);
    case ResultFile::PoseOverlay: {
      cv::Mat overlay = drawOnPicture && drawableInPlace(bgr) ? bgr : bgr.clone();
      drawPoses(overlay, frame.poses, keypoints308(),
                poseDrawStyleFor(overlay.size(), options.keypointThreshold));
      return writeImageFile(path, overlay, {}, note);
    }
  }
}

// Whether exportFrame writes `file` for `frame` with `options`.
bool exported(const ResultFileInfo& info, const FrameResult& frame, const FrameExportOptions& options) {
  if (!frame.has(info.task)) return false;
  switch (info.file) {
    case ResultFile::SegOverlay:
      return options.overlays;
    case ResultFile::Pose:
    case ResultFile::PoseCoco:
      return options.poseFiles;
    case ResultFile::PoseCoco17:
    case ResultFile::PoseWholeBody:
    case ResultFile::PoseOpenPose:  // a video's frames too: its official keypoints are one file per video
      return std::find(options.keypointFormats.begin(), options.keypointFormats.end(),
                       convertedFormat(info.file)) != options.keypointFormats.end();
    case ResultFile::PoseOverlay:
      return options.poseFiles && options.overlays;
    case ResultFile::PointmapExr:
      return exrWritingSupported();
    case ResultFile::Glb:
      return options.glb;
    default:
      return true;
  }
}

void writeFrameFiles(const FrameResult& frame, const cv::Mat& bgr, bool drawOnPicture,
                     const std::string& stem, const std::string& imageName, const FrameExportOptions& options,
                     std::map<std::string, std::string>& outputs) {
  fs::create_directories(fs::path(stem).parent_path());
  for (const ResultFileInfo& info : resultFiles()) {
    if (!exported(info, frame, options)) continue;
    const std::string path = stem + info.suffix;
    outputs[info.kind] = path;
    writeOne(info.file, path, frame, bgr, drawOnPicture, imageName, options);
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

const std::vector<ResultFileInfo>& resultFiles() {
  static const std::vector<ResultFileInfo> files = {
      {ResultFile::Seg, Task::Seg, "seg", ".seg.png"},
      {ResultFile::SegOverlay, Task::Seg, "seg_overlay", ".seg_overlay.png"},
      {ResultFile::Pose, Task::Pose, "pose", ".pose.json"},
      {ResultFile::PoseCoco, Task::Pose, "pose_coco", ".pose.coco.json"},
      {ResultFile::PoseCoco17, Task::Pose, "pose_coco17", ".pose.coco17.json"},
      {ResultFile::PoseWholeBody, Task::Pose, "pose_wholebody", ".pose.wholebody.json"},
      {ResultFile::PoseOpenPose, Task::Pose, "pose_openpose", ".pose.openpose.json"},
      {ResultFile::Normal, Task::Normal, "normal", ".normal.png"},
      {ResultFile::NormalNpy, Task::Normal, "normal_npy", ".normal.npy"},
      {ResultFile::Albedo, Task::Albedo, "albedo", ".albedo.png"},
      {ResultFile::AlbedoNpy, Task::Albedo, "albedo_npy", ".albedo.npy"},
      {ResultFile::PointmapNpy, Task::Pointmap, "pointmap_npy", ".pointmap.npy"},
      {ResultFile::Depth, Task::Pointmap, "depth", ".depth.png"},
      {ResultFile::PointmapExr, Task::Pointmap, "pointmap_exr", ".pointmap.exr"},
      {ResultFile::Ply, Task::Pointmap, "ply", ".ply"},
      {ResultFile::Glb, Task::Pointmap, "glb", ".glb"},
      {ResultFile::Alpha, Task::Matting, "alpha", ".alpha.png"},
      {ResultFile::AlphaNpy, Task::Matting, "alpha_npy", ".alpha.npy"},
      {ResultFile::Cutout, Task::Matting, "cutout", ".cutout.png"},
      {ResultFile::PoseOverlay, Task::Pose, "pose_overlay", ".pose_overlay.png"},
  };
  return files;
}

const ResultFileInfo& resultFileInfo(ResultFile file) {
  for (const ResultFileInfo& info : resultFiles())
    if (info.file == file) return info;
  throw std::invalid_argument("unknown result file kind");
}

void writeResultFile(ResultFile file, const std::string& path, const FrameResult& frame, const cv::Mat& bgr,
                     const std::string& imageName, const FrameExportOptions& options) {
  writeOne(file, path, frame, bgr, false, imageName, options);
}

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
    if (frame.has(Task::Matting)) return mattingComposite(bgr, frame.alpha, frame.foreground);
    return bgr.clone();
  }
  cv::Mat picture = frame.has(Task::Seg) ? segmentationOverlay(bgr, frame.segLabels, seg29()) : bgr.clone();
  if (frame.has(Task::Pose))
    drawPoses(picture, frame.poses, keypoints308(), poseDrawStyleFor(picture.size(), keypointThreshold));
  return picture;
}

}  // namespace sapiens
