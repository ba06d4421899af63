#include "sapiens/run/video_run.h"

#include "run/motion_summary_json.h"
#include "run_manifest.h"

#include "sapiens/common/log.h"
#include "sapiens/common/version.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"
#include "sapiens/media/video_writer.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/demo_weights.h"
#include "sapiens/motion/motion_error.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/run/frame_export.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <stdexcept>

namespace sapiens {
namespace fs = std::filesystem;

std::int64_t selectedFrameCount(const FrameSelection& s, std::int64_t frameCount) {
  if (frameCount < 0) return s.maxFrames;
  const std::int64_t end = s.end >= 0 ? std::min(s.end, frameCount) : frameCount;
  std::int64_t n = end > s.first ? (end - s.first + s.every - 1) / s.every : 0;
  if (s.maxFrames >= 0) n = std::min(n, s.maxFrames);
  return n;
}

FrameSelection shardSelection(const FrameSelection& s, std::int64_t frameCount, const Shard& shard) {
  const std::int64_t total = std::max<std::int64_t>(0, selectedFrameCount(s, frameCount));
  const auto [begin, end] = shardRange(shard, static_cast<std::size_t>(total));
  FrameSelection part = s;
  part.first = s.first + static_cast<std::int64_t>(begin) * s.every;
  part.maxFrames = -1;
  // The last part runs to the selection's own end, so that a frame count the container only estimated
  // (from its duration) cannot leave frames out.
  const bool last = shard.index + 1 == shard.count;
  part.end = last && s.maxFrames < 0 ? s.end : s.first + static_cast<std::int64_t>(end) * s.every;
  return part;
}

namespace {

// "out.mp4" -> "out.shard-2-of-4.mp4"
std::string withShardSuffix(const std::string& path, const std::optional<Shard>& shard) {
  if (!shard) return path;
  const fs::path p(path);
  return (p.parent_path() / (p.stem().string() + shardSuffix(shard) + p.extension().string())).string();
}

// Each task's failures and warnings on a frame, counted; the first of each kind is logged.
void noteFrameProblems(const FrameResult& r, std::int64_t frame,
                       std::map<Task, TaskFrameProblems>& problems) {
  for (const auto& [task, error] : r.taskErrors) {
    TaskFrameProblems& p = problems[task];
    if (p.failedFrames++ == 0) {
      p.firstError = error;
      logger().error("frame {}: {} failed: {} (further frames where it fails are counted in the manifest)",
                     frame, taskName(task), error);
    }
  }
  for (const auto& [task, warning] : r.warnings) {
    TaskFrameProblems& p = problems[task];
    if (p.warnedFrames++ == 0) {
      p.firstWarning = warning;
      logger().warn("frame {}: {} (further such frames are counted in the manifest)", frame, warning);
    }
  }
}

// Narrows pipeline.selection to the shard's frames; what the manifest says of the shard.
nlohmann::json selectShard(const VideoRunOptions& options, const SourceInfo& info,
                           FramePipelineOptions& pipeline) {
  if (info.live) throw std::invalid_argument(options.input + ": a camera cannot be split into shards");
  if (info.frameCount <= 0)
    throw std::invalid_argument(options.input +
                                ": its frame count is unknown, so it cannot be split into shards; give each "
                                "job a frame range (--frames START:END) instead");
  pipeline.selection = shardSelection(options.selection, info.frameCount, *options.shard);
  const FrameSelection& part = pipeline.selection;
  const std::int64_t end =
      std::max(part.end >= 0 ? std::min(part.end, info.frameCount) : info.frameCount, part.first);
  logger().info("shard {} of {}: frames {} to {} (every {})", options.shard->index + 1, options.shard->count,
                part.first, end - 1, part.every);
  return {{"index", options.shard->index + 1},
          {"count", options.shard->count},
          {"frames_total", selectedFrameCount(options.selection, info.frameCount)},
          {"first_frame", part.first},
          {"end_frame", end},
          {"every", part.every}};
}

// Where each processed frame goes: the keypoints of the video, the per-frame files, the annotated video.
struct VideoOutputs {
  VideoOutputs(const VideoRunOptions& o, const SourceInfo& i, const std::vector<Task>& d)
      : options(o), info(i), demoTasks(d) {}

  const VideoRunOptions& options;
  const SourceInfo& info;
  const std::vector<Task>& demoTasks;
  bool posing = false;
  fs::path framesDir;
  std::string videoPath;
  KeypointPredictions keypoints;
  FrameExportOptions frameExport;
  std::optional<DepthRange> depthRange;  // one colour scale for the whole video: it only widens
  std::unique_ptr<VideoWriter> writer;

  void writeFrameFiles(const FrameResult& r, const cv::Mat& bgr, const std::string& frameName) {
    if (r.has(Task::Pointmap)) {
      const cv::Mat foreground = r.has(Task::Seg) ? r.segLabels : cv::Mat();
      if (auto range = foregroundDepthRange(r.pointmap, foreground)) {
        if (depthRange)
          depthRange->include(*range);
        else
          depthRange = range;
      }
      frameExport.depthRange = depthRange;
    }
    exportFrame(r, bgr, (framesDir / frameName).string(), frameName, frameExport);
  }

  void writeVideoFrame(const FrameResult& r, const Frame& frame) {
    const cv::Mat picture = annotatedPicture(r, frame.bgr, options.exports.keypointThreshold);
    if (!writer) {
      VideoWriterOptions w = videoWriterOptionsFor(info, picture.cols, picture.rows);
      if (!demoTasks.empty()) w.comment = demo::kNotice;
      writer = std::make_unique<VideoWriter>(videoPath, w);
    }
    writer->write(picture, frame.timestampSeconds);
  }

  void take(ProcessedFrame& p, std::map<Task, TaskFrameProblems>& problems) {
    const FrameResult& r = p.result;
    const std::string frameName = fmt::format("{:06d}", p.frame.index);
    noteFrameProblems(r, p.frame.index, problems);
    if (posing) {
      keypoints.imageWidth = r.width;
      keypoints.imageHeight = r.height;
      keypoints.frames.push_back({frameName, r.poses, p.frame.timestampSeconds});
    }
    if (options.perFrameFiles) writeFrameFiles(r, p.frame.bgr, frameName);
    if (options.annotatedVideo) writeVideoFrame(r, p.frame);
  }

  // What was processed is kept, whatever ended the run.
  void finish(const fs::path& stem, VideoRunSummary& summary) {
    if (writer) {
      try {
        writer->finish();
        summary.annotatedVideo = writer->path();
        summary.encoder = writer->encoderName();
      } catch (const std::exception& e) {
        logger().error("{}", e.what());
        if (summary.stats.error.empty()) summary.stats.failedStage = "sink", summary.stats.error = e.what();
      }
    }
    if (posing) {
      summary.keypointsJson = stem.string() + shardSuffix(options.shard) + ".pose.json";
      writeKeypointsJson(summary.keypointsJson, keypoints);
    }
  }
};

void addRunFigures(nlohmann::json& manifest, const VideoRunOptions& options, const VideoRunSummary& summary,
                   const SourceInfo& info, const std::string& framesDir) {
  manifest["input"] = options.input;
  manifest["source"] = {{"width", info.width},       {"height", info.height}, {"fps", info.fps},
                        {"frames", info.frameCount}, {"live", info.live},     {"codec", info.codec}};
  for (const auto& [task, p] : summary.frameProblems) {
    const std::string name(taskName(task));
    if (p.failedFrames)
      manifest["task_failures"][name] = {{"frames", p.failedFrames}, {"error", p.firstError}};
    if (p.warnedFrames)
      manifest["warnings"][name] = {{"frames", p.warnedFrames}, {"warning", p.firstWarning}};
  }
  const FramePipelineStats& s = summary.stats;
  manifest["frames"] = {
      {"decoded", s.decoded},       {"processed", s.processed},           {"dropped", s.dropped},
      {"fps", s.framesPerSecond()}, {"mean_latency_ms", s.meanLatencyMs}, {"max_latency_ms", s.maxLatencyMs}};
  manifest["outputs"] = {{"annotated_video", summary.annotatedVideo},
                         {"encoder", summary.encoder},
                         {"keypoints", summary.keypointsJson},
                         {"frames_folder", options.perFrameFiles ? framesDir : ""}};
  manifest["smoothing"] = options.smooth;
  manifest["cancelled"] = s.cancelled;
  if (!s.error.empty()) manifest["error"] = {{"stage", s.failedStage}, {"message", s.error}};
}

// The run's motion files; a failure is the summary's and the manifest's, the run's other outputs stand.
nlohmann::json exportRunMotion(const VideoRunOptions& options, const KeypointPredictions& keypoints,
                               const fs::path& stem, VideoRunSummary& summary) {
  try {
    summary.motion = exportMotion(keypoints, stem.string(), *options.motion);
    return detail::motionSummaryJson(summary.keypointsJson, *options.motion, *summary.motion);
  } catch (const motion::MotionError& e) {
    summary.motionError = e.what();
    logger().error("motion: {}", e.what());
    return {{"error", summary.motionError}};
  }
}

}  // namespace

VideoRunSummary runVideo(const VideoRunOptions& options, const VideoRunCallbacks& callbacks) {
  VideoRunSummary summary;
  if (options.shard && options.smooth)
    throw std::invalid_argument(
        "temporal smoothing cannot be split into shards: each shard would smooth "
        "without the frames before its first");
  detail::createOutputFolder(options.outputDir);
  LoadedTaskModels loaded = loadTaskModels(options.models);
  summary.taskErrors = loaded.errors;
  summary.demoTasks = loaded.demoTasks;
  if (loaded.models.empty()) throw std::runtime_error("no model could be loaded: " + loaded.errors.front());

  std::unique_ptr<FrameSource> source = openFrameSource(options.input);
  const SourceInfo info = source->info();
  const std::string stemName = info.live ? "camera" : fs::path(options.input).stem().string();
  const fs::path stem = fs::path(options.outputDir) / stemName;
  logger().info("{}: {}x{}, {:.3f} fps, {} frames, {}", options.input, info.width, info.height, info.fps,
                info.frameCount, info.codec);

  FramePipelineOptions pipeline;
  for (const LoadedTaskModel& m : loaded.models) pipeline.models.push_back({&m.model.model(), m.inputSize});
  pipeline.personBoxes = options.personBoxes;
  pipeline.personBoxesByFrame = options.personBoxesByFrame;
  pipeline.selection = options.selection;
  const nlohmann::json shardEntry = options.shard ? selectShard(options, info, pipeline) : nlohmann::json();
  pipeline.batchSize = options.batchSize;
  if (options.smooth) pipeline.smoothing = SmoothingOptions{};

  VideoOutputs outputs(options, info, summary.demoTasks);
  outputs.posing = std::any_of(loaded.models.begin(), loaded.models.end(),
                               [](const LoadedTaskModel& m) { return m.task == Task::Pose; });
  if (outputs.posing) pipeline.tracking = TrackingOptions{};
  outputs.framesDir = fs::path(options.outputDir) / (stemName + "_frames");
  outputs.videoPath = options.videoOut.empty() ? stem.string() + shardSuffix(options.shard) + ".annotated.mp4"
                                               : withShardSuffix(options.videoOut, options.shard);
  outputs.keypoints.video = fs::path(options.input).filename().string();
  if (std::find(summary.demoTasks.begin(), summary.demoTasks.end(), Task::Pose) != summary.demoTasks.end())
    outputs.keypoints.note = demo::kNotice;
  outputs.keypoints.numKeypoints = static_cast<int>(keypoints308().size());
  outputs.keypoints.keypointThreshold = options.exports.keypointThreshold;
  outputs.frameExport = options.exports;
  outputs.frameExport.overlays = false;
  outputs.frameExport.poseFiles = false;
  outputs.frameExport.demoTasks = summary.demoTasks;

  FramePipelineCallbacks pipelineCallbacks;
  pipelineCallbacks.isCancelled = callbacks.isCancelled;
  const std::int64_t expected = selectedFrameCount(pipeline.selection, info.live ? -1 : info.frameCount);
  pipelineCallbacks.onProgress = [&](const FramePipelineStats& stats) {
    if (callbacks.onProgress) callbacks.onProgress({stats, expected});
  };
  pipelineCallbacks.sink = [&](ProcessedFrame& p) { outputs.take(p, summary.frameProblems); };
  summary.stats = runFramePipeline(*source, pipeline, pipelineCallbacks);
  outputs.finish(stem, summary);

  nlohmann::json manifest =
      detail::manifestOfModels(loaded.models, options.models.dtype, summary.taskErrors, summary.demoTasks);
  addRunFigures(manifest, options, summary, info, outputs.framesDir.string());
  if (options.motion) manifest["motion"] = exportRunMotion(options, outputs.keypoints, stem, summary);
  if (outputs.posing) manifest["tracks"] = summary.stats.tracks;
  if (options.shard) manifest["shard"] = shardEntry;
  summary.manifestPath = (fs::path(options.outputDir) / manifestNameFor(options.shard)).string();
  writeFileAtomically(summary.manifestPath, manifest.dump(2) + "\n");
  return summary;
}

}  // namespace sapiens
