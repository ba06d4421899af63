#include "result_export.h"

#include "sapiens/export/exr.h"

#include <stdexcept>

namespace sapiens::studio {

const std::vector<ExportKindInfo>& exportKinds() {
  static const std::vector<ExportKindInfo> kinds = [] {
    std::vector<ExportKindInfo> all = {
        {ExportKind::Ply, ResultFile::Ply, "ply", "Point Cloud (&PLY)...", "PLY point cloud (*.ply)"},
        {ExportKind::MaskPng, ResultFile::Seg, "mask_png", "Part &Mask (PNG)...", "Class index PNG (*.png)"},
        {ExportKind::SegOverlayPng, ResultFile::SegOverlay, "seg_overlay_png", "Part Mask &Overlay (PNG)...",
         "PNG image (*.png)"},
        {ExportKind::KeypointsJson, ResultFile::Pose, "keypoints_json", "&Keypoints (JSON)...",
         "Keypoints JSON (*.json)"},
        {ExportKind::CocoKeypointsJson, ResultFile::PoseCoco, "coco_keypoints_json",
         "Keypoints (&COCO JSON)...", "COCO keypoints JSON (*.json)"},
        {ExportKind::PoseOverlayPng, ResultFile::PoseOverlay, "pose_overlay_png",
         "&Skeleton Overlay (PNG)...", "PNG image (*.png)"},
        {ExportKind::Coco17Json, ResultFile::PoseCoco17, "coco17_json", "Keypoints as COCO-&17 (JSON)...",
         "COCO keypoints JSON (*.json)"},
        {ExportKind::WholeBodyJson, ResultFile::PoseWholeBody, "wholebody_json",
         "Keypoints as COCO-&WholeBody (JSON)...", "COCO-WholeBody JSON (*.json)"},
        {ExportKind::OpenPoseJson, ResultFile::PoseOpenPose, "openpose_json",
         "Keypoints as &OpenPose (JSON)...", "OpenPose JSON (*.json)"},
        {ExportKind::NormalPng, ResultFile::Normal, "normal_png", "&Normals (PNG)...", "PNG image (*.png)"},
        {ExportKind::NormalNpy, ResultFile::NormalNpy, "normal_npy", "Normals (NP&Y)...",
         "NumPy array (*.npy)"},
        {ExportKind::AlbedoPng, ResultFile::Albedo, "albedo_png", "&Albedo (PNG)...", "PNG image (*.png)"},
        {ExportKind::AlbedoNpy, ResultFile::AlbedoNpy, "albedo_npy", "Albedo (NPY)...",
         "NumPy array (*.npy)"},
        {ExportKind::DepthPng, ResultFile::Depth, "depth_png", "&Depth (PNG)...", "PNG image (*.png)"},
        {ExportKind::PointmapNpy, ResultFile::PointmapNpy, "pointmap_npy", "Pointmap (NPY)...",
         "NumPy array (*.npy)"},
        {ExportKind::MeshGlb, ResultFile::Glb, "glb", "&Mesh (GLB)...", "Binary glTF (*.glb)"},
        {ExportKind::AlphaPng, ResultFile::Alpha, "alpha_png", "Alpha &Matte (16-bit PNG)...",
         "PNG image (*.png)"},
        {ExportKind::AlphaNpy, ResultFile::AlphaNpy, "alpha_npy", "Alpha Matte (NPY)...",
         "NumPy array (*.npy)"},
        {ExportKind::CutoutPng, ResultFile::Cutout, "cutout_png", "&Cut-out (RGBA PNG)...",
         "PNG image (*.png)"},
        {ExportKind::PointmapExr, ResultFile::PointmapExr, "pointmap_exr", "Pointmap (&EXR)...",
         "OpenEXR image (*.exr)"},
    };
    if (!exrWritingSupported()) all.pop_back();
    return all;
  }();
  return kinds;
}

const ExportKindInfo& exportKindInfo(ExportKind kind) {
  for (const ExportKindInfo& info : exportKinds()) {
    if (info.kind == kind) return info;
  }
  throw std::invalid_argument("this build cannot export that kind of file");
}

Task exportTask(ExportKind kind) {
  return resultFileInfo(exportKindInfo(kind).file).task;
}

void writeExport(const ExportRequest& request) {
  FrameExportOptions options;
  options.keypointThreshold = request.keypointThreshold;
  if (request.fromDemoWeights) options.demoTasks.push_back(exportTask(request.kind));
  writeResultFile(exportKindInfo(request.kind).file, request.path, request.frame, request.imageBgr,
                  request.imageName, options);
}

}  // namespace sapiens::studio
