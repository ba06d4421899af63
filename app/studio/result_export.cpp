#include "result_export.h"

#include "sapiens/export/keypoint_metadata.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/map_png.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/export/npy.h"
#include "sapiens/export/ply.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/model/demo_weights.h"

#include <stdexcept>

namespace sapiens::studio {

const std::vector<ExportKindInfo>& exportKinds() {
  static const std::vector<ExportKindInfo> kinds = {
      {ExportKind::Ply, Task::Pointmap, "ply", "Point Cloud (&PLY)...", ".ply", "PLY point cloud (*.ply)"},
      {ExportKind::MaskPng, Task::Seg, "mask_png", "Part &Mask (PNG)...", ".seg.png",
       "Class index PNG (*.png)"},
      {ExportKind::KeypointsJson, Task::Pose, "keypoints_json", "&Keypoints (JSON)...", ".pose.json",
       "Keypoints JSON (*.json)"},
      {ExportKind::NormalPng, Task::Normal, "normal_png", "&Normals (PNG)...", ".normal.png",
       "PNG image (*.png)"},
      {ExportKind::NormalNpy, Task::Normal, "normal_npy", "Normals (NP&Y)...", ".normal.npy",
       "NumPy array (*.npy)"},
      {ExportKind::AlbedoPng, Task::Albedo, "albedo_png", "&Albedo (PNG)...", ".albedo.png",
       "PNG image (*.png)"},
      {ExportKind::AlbedoNpy, Task::Albedo, "albedo_npy", "Albedo (NPY)...", ".albedo.npy",
       "NumPy array (*.npy)"},
      {ExportKind::DepthPng, Task::Pointmap, "depth_png", "&Depth (PNG)...", ".depth.png",
       "PNG image (*.png)"},
      {ExportKind::PointmapNpy, Task::Pointmap, "pointmap_npy", "Pointmap (NPY)...", ".pointmap.npy",
       "NumPy array (*.npy)"},
  };
  return kinds;
}

const ExportKindInfo& exportKindInfo(ExportKind kind) {
  for (const ExportKindInfo& info : exportKinds()) {
    if (info.kind == kind) return info;
  }
  throw std::invalid_argument("unknown export kind");
}

void writeExport(const ExportRequest& request) {
  const FrameResult& frame = request.frame;
  const ExportKindInfo& info = exportKindInfo(request.kind);
  if (!frame.has(info.task)) {
    throw std::invalid_argument("cannot write " + request.path + ": there is no " +
                                std::string(taskName(info.task)) + " result for this image");
  }
  const cv::Mat foreground = frame.has(Task::Seg) ? frame.segLabels : cv::Mat();
  const std::string note = request.fromDemoWeights ? demo::kNotice : "";
  switch (request.kind) {
    case ExportKind::Ply:
      writePly(request.path, buildPointCloud(frame, request.imageBgr), PlyEncoding::BinaryLittleEndian, note);
      break;
    case ExportKind::MaskPng:
      writeLabelPng(request.path, frame.segLabels, note);
      break;
    case ExportKind::KeypointsJson: {
      KeypointPredictions predictions;
      predictions.imageHeight = frame.height;
      predictions.imageWidth = frame.width;
      predictions.numKeypoints =
          frame.poses.empty() ? int(keypoints308().size()) : int(frame.poses.front().keypoints.size());
      predictions.keypointThreshold = request.keypointThreshold;
      predictions.frames.push_back({request.imageName, frame.poses});
      predictions.note = note;
      writeKeypointsJson(request.path, predictions);
      break;
    }
    case ExportKind::NormalPng:
      writeNormalPng(request.path, frame.normal, foreground, note);
      break;
    case ExportKind::NormalNpy:
      writeNpy(request.path, frame.normal);
      break;
    case ExportKind::AlbedoPng:
      writeAlbedoPng(request.path, frame.albedo, foreground, note);
      break;
    case ExportKind::AlbedoNpy:
      writeNpy(request.path, frame.albedo);
      break;
    case ExportKind::DepthPng:
      writeDepthPng(request.path, frame.pointmap, foreground, std::nullopt, note);
      break;
    case ExportKind::PointmapNpy:
      writeNpy(request.path, frame.pointmap);
      break;
  }
}

}  // namespace sapiens::studio
