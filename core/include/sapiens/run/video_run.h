#pragma once
// `sapiens-cli run VIDEO` and `--camera` as a library call: one video file or camera through the task
// models with the frame pipeline, written as an annotated video (same frame times as the input), the
// per-video keypoints JSON (official layout, one frames[] entry per frame), per-frame masks and maps in
// STEM_frames/, numbered PLY files for pointmaps, and a results.json manifest. Whatever was processed
// before a failure or a cancel is written and valid.

#include "sapiens/pipeline/frame_pipeline.h"
#include "sapiens/pipeline/task_models.h"
#include "sapiens/run/frame_export.h"
#include "sapiens/run/motion_export.h"
#include "sapiens/run/shard.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sapiens {

struct VideoRunOptions {
  std::string input;  ///< a video file or a camera device (/dev/videoN)
  TaskModelRequest models;
  std::string outputDir;
  std::string videoOut;  ///< annotated video; "" = outputDir/STEM.annotated.mp4
  bool annotatedVideo = true;
  bool perFrameFiles = true;  ///< masks, maps and PLYs per frame in STEM_frames/
  FrameSelection selection;
  /// Only this contiguous part of the selected frames (files only). Its outputs carry ".shard-K-of-N" in
  /// their names (the per-frame files do not need to), its manifest is results.shard-K-of-N.json.
  std::optional<Shard> shard;
  std::size_t batchSize = 1;
  bool smooth = false;
  std::vector<BoundingBox> personBoxes;
  std::map<std::int64_t, std::vector<BoundingBox>> personBoxesByFrame;  ///< see FramePipelineOptions
  /// The per-frame files (overlays and the official keypoint file are per video instead; the converted
  /// layouts of keypointFormats are per frame, STEM_frames/NNNNNN.pose.FORMAT.json, with each person's
  /// track id; the run fills in demoTasks), and the keypoint threshold of the annotated video and the
  /// keypoint files.
  FrameExportOptions exports;
  /// Motion per tracked person from the run's keypoints (sapiens/run/motion_export.h): needs pose and
  /// pointmap; its summary goes into the manifest as "motion".
  std::optional<MotionExportOptions> motion;
};

struct VideoRunProgress {
  FramePipelineStats stats;
  std::int64_t expectedFrames = -1;  ///< after the selection; -1 unknown (cameras)
};

struct VideoRunCallbacks {
  std::function<void(const VideoRunProgress&)> onProgress;
  std::function<bool()> isCancelled;
};

/// What went wrong for one task over the frames: failures (its map missing there) and warnings (NaN or
/// infinite values in its output), each with the first frame's sentence.
struct TaskFrameProblems {
  std::int64_t failedFrames = 0;
  std::string firstError;
  std::int64_t warnedFrames = 0;
  std::string firstWarning;
};

struct VideoRunSummary {
  FramePipelineStats stats;
  std::vector<std::string> taskErrors;  ///< models that could not be loaded
  std::map<Task, TaskFrameProblems> frameProblems;
  std::vector<Task> demoTasks;  ///< tasks that ran on untrained demo weights
  std::string annotatedVideo;   ///< "" when none was written
  std::string encoder;
  std::string keypointsJson;
  std::string manifestPath;
  std::optional<MotionExportSummary> motion;  ///< when motion was asked for and a track has files
  std::string motionError;                    ///< why motion was asked for and no track has files
};

/// Throws for what stops everything before a frame is read (no model loads, the input cannot be opened,
/// the output folder cannot be made); later problems are in the summary's stats.
VideoRunSummary runVideo(const VideoRunOptions& options, const VideoRunCallbacks& callbacks = {});

/// Frames the selection keeps out of `frameCount` (-1 when unknown).
std::int64_t selectedFrameCount(const FrameSelection& selection, std::int64_t frameCount);

/// The selection of `shard`'s part of the frames `selection` keeps out of `frameCount` (known).
FrameSelection shardSelection(const FrameSelection& selection, std::int64_t frameCount, const Shard& shard);

}  // namespace sapiens
