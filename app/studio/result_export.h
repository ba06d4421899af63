#pragma once
// File > Export: each kind of file the studio writes from the current image's results, through the
// core exporters (the same files `sapiens-cli run` writes).

#include "sapiens/model/task.h"
#include "sapiens/pipeline/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QString>

#include <string>
#include <vector>

namespace sapiens::studio {

enum class ExportKind {
  Ply,
  MaskPng,
  KeypointsJson,
  NormalPng,
  NormalNpy,
  AlbedoPng,
  AlbedoNpy,
  DepthPng,
  PointmapNpy
};

struct ExportKindInfo {
  ExportKind kind;
  Task task;           ///< the result it needs
  const char* id;      ///< object-name suffix and file suffix stem: "ply", "mask_png", ...
  const char* label;   ///< menu text
  const char* suffix;  ///< appended to the image's base name: ".ply", ".seg.png", ...
  const char* filter;  ///< file-dialog filter
};

const std::vector<ExportKindInfo>& exportKinds();
const ExportKindInfo& exportKindInfo(ExportKind kind);

struct ExportRequest {
  ExportKind kind = ExportKind::Ply;
  std::string path;
  FrameResult frame;
  cv::Mat imageBgr;
  std::string imageName;  ///< for the keypoints file
  float keypointThreshold = 0.3f;
  bool fromDemoWeights = false;  ///< the task's model was untrained demo weights: the file says so
};

/// Writes the file. Throws (ExportError, IoError, std::invalid_argument) naming the file when the frame
/// lacks the result or the file cannot be written.
void writeExport(const ExportRequest& request);

}  // namespace sapiens::studio
