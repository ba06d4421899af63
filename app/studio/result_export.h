#pragma once
// File > Export: each kind of file the studio writes from the current image's results, through the
// core's writer of each file (the same files `sapiens-cli run` writes).

#include "sapiens/model/task.h"
#include "sapiens/result/frame_result.h"
#include "sapiens/run/frame_export.h"

#include <opencv2/core/mat.hpp>

#include <QString>

#include <string>
#include <vector>

namespace sapiens::studio {

enum class ExportKind {
  Ply,
  MaskPng,
  SegOverlayPng,
  KeypointsJson,
  CocoKeypointsJson,
  PoseOverlayPng,
  Coco17Json,
  WholeBodyJson,
  OpenPoseJson,
  NormalPng,
  NormalNpy,
  AlbedoPng,
  AlbedoNpy,
  DepthPng,
  PointmapNpy,
  MeshGlb,
  AlphaPng,
  AlphaNpy,
  CutoutPng,
  PointmapExr,  // last: left out where this build writes no EXR
};

struct ExportKindInfo {
  ExportKind kind;
  ResultFile file;     ///< what core writes: its task and file suffix
  const char* id;      ///< object-name suffix: "ply", "mask_png", ...
  const char* label;   ///< menu text
  const char* filter;  ///< file-dialog filter
};

/// The kinds File > Export offers (EXR only where this build writes it).
const std::vector<ExportKindInfo>& exportKinds();
const ExportKindInfo& exportKindInfo(ExportKind kind);
/// The task whose result `kind` is made from.
Task exportTask(ExportKind kind);

struct ExportRequest {
  ExportKind kind = ExportKind::Ply;
  std::string path;
  FrameResult frame;
  cv::Mat imageBgr;
  std::string imageName;  ///< for the keypoints file
  float keypointThreshold = 0.3f;
  bool fromDemoWeights = false;  ///< the task's model was untrained demo weights: the file says so
};

/// Writes the file through core's writeResultFile. Throws (ExportError, IoError) naming the file when the
/// frame lacks the result or the file cannot be written.
void writeExport(const ExportRequest& request);

}  // namespace sapiens::studio
