#pragma once
// Every result of one picture (or video frame) written next to a stem, through the core exporters:
// STEM.seg.png, STEM.seg_overlay.png, STEM.pose.json, STEM.pose.coco.json, STEM.pose_overlay.png,
// STEM.normal.png/.npy, STEM.albedo.png/.npy, STEM.pointmap.npy (+ .exr), STEM.depth.png, STEM.ply (+ .glb),
// STEM.alpha.png/.npy, STEM.cutout.png.

#include "sapiens/export/map_png.h"
#include "sapiens/export/ply.h"
#include "sapiens/result/frame_result.h"
#include "sapiens/result/keypoint_formats.h"
#include "sapiens/result/keypoint_metadata.h"

#include <opencv2/core/mat.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sapiens {

struct FrameExportOptions {
  bool overlays = true;   ///< STEM.seg_overlay.png and STEM.pose_overlay.png
  bool poseFiles = true;  ///< STEM.pose.json and STEM.pose.coco.json (videos write one file per video)
  float keypointThreshold = kDefaultKeypointThreshold;
  PlyEncoding plyEncoding = PlyEncoding::BinaryLittleEndian;
  bool plyFaces = false;
  bool glb = false;  ///< STEM.glb, the pointmap's mesh as binary glTF
  /// The pose also as STEM.pose.coco17.json, STEM.pose.wholebody.json, STEM.pose.openpose.json (with or
  /// without poseFiles: a video run writes them per frame, each person with their track id).
  std::vector<KeypointFormat> keypointFormats;
  std::optional<DepthRange> depthRange;  ///< of the depth picture; default: the frame's own
  /// Tasks whose model was untrained demo weights: their files say so wherever the format has room
  /// (demo::kNotice as a PNG text chunk, a PLY comment, the keypoints JSON "note").
  std::vector<Task> demoTasks;
};

/// One kind of file made from a picture's results, in the order exportFrame writes them (the pose
/// overlay last: it may draw on the picture itself).
enum class ResultFile {
  Seg,            ///< class index PNG
  SegOverlay,     ///< the part mask blended over the picture
  Pose,           ///< the official keypoints JSON
  PoseCoco,       ///< COCO keypoints JSON
  PoseCoco17,     ///< COCO-17 keypoints JSON (converted, FrameExportOptions::keypointFormats)
  PoseWholeBody,  ///< COCO-WholeBody-133 JSON (converted)
  PoseOpenPose,   ///< OpenPose BODY_25 + hands + face JSON (converted)
  Normal,         ///< normal map PNG
  NormalNpy,      ///< float32 unit normals
  Albedo,         ///< albedo PNG
  AlbedoNpy,      ///< float32 albedo
  PointmapNpy,    ///< float32 metric pointmap
  Depth,          ///< depth PNG (turbo colour map)
  PointmapExr,    ///< float32 metric pointmap (where this build writes EXR)
  Ply,            ///< binary point cloud (faces with plyFaces)
  Glb,            ///< the pointmap's mesh as binary glTF (with FrameExportOptions::glb)
  Alpha,          ///< 16-bit alpha matte PNG
  AlphaNpy,       ///< float32 alpha in [0, 1], as the official matting demo writes it
  Cutout,         ///< the picture with the alpha matte as its alpha channel (RGBA PNG)
  PoseOverlay,    ///< skeletons and boxes drawn over the picture
};

struct ResultFileInfo {
  ResultFile file;
  Task task;           ///< the result it is made from
  const char* kind;    ///< its key in exportFrame's map and the manifests: "seg", "pose_coco", ...
  const char* suffix;  ///< after the stem: ".seg.png", ".pose.coco.json", ...
};

/// Every kind, in writing order.
const std::vector<ResultFileInfo>& resultFiles();
const ResultFileInfo& resultFileInfo(ResultFile file);

/// Writes one file (atomically; its folder must exist). `imageName` goes into the keypoint files;
/// options.demoTasks marks the file. Throws ExportError naming `path` when `frame` has no result of the
/// file's task, or what the writer throws.
void writeResultFile(ResultFile file, const std::string& path, const FrameResult& frame, const cv::Mat& bgr,
                     const std::string& imageName, const FrameExportOptions& options);

/// Writes the files (atomically, folders created) and returns them by kind: "seg", "seg_overlay", "pose",
/// "pose_coco", "pose_coco17", "pose_wholebody", "pose_openpose", "pose_overlay", "normal", "normal_npy",
/// "albedo", "albedo_npy", "pointmap_npy", "pointmap_exr", "depth", "ply", "glb", "alpha", "alpha_npy",
/// "cutout". `imageName` goes into the keypoint files. Throws on a write error.
std::map<std::string, std::string> exportFrame(const FrameResult& frame, const cv::Mat& bgr,
                                               const std::string& stem, const std::string& imageName,
                                               const FrameExportOptions& options);

/// The same for a picture handed over (a batch run's, read for this frame only; `picture` is left
/// empty): the pose overlay is drawn on the picture itself when no other cv::Mat shares its pixels, so a
/// 16000 x 16000 picture (768 MB) is not copied for it.
std::map<std::string, std::string> exportFrameConsumingPicture(const FrameResult& frame, cv::Mat&& picture,
                                                               const std::string& stem,
                                                               const std::string& imageName,
                                                               const FrameExportOptions& options);

/// The picture with its results drawn over it, as the annotated video shows it: the part mask blended,
/// then the people's skeletons and boxes. With neither seg nor pose, the first of normal, albedo, depth and
/// the matting composite as a picture; with nothing, the picture itself.
cv::Mat annotatedPicture(const FrameResult& frame, const cv::Mat& bgr, float keypointThreshold);

}  // namespace sapiens
