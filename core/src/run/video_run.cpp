#include "sapiens/run/video_run.h"

#include "sapiens/common/log.h"
#include "sapiens/common/version.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"
#include "sapiens/media/video_writer.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/model/demo_weights.h"
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

}  // namespace

VideoRunSummary runVideo(const VideoRunOptions& options, const VideoRunCallbacks& callbacks) {
  VideoRunSummary summary;
  if (options.shard && options.smooth)
    throw std::invalid_argument(
        "temporal smoothing cannot be split into shards: each shard would smooth "
        "without the frames before its first");
  std::error_code ec;
  fs::create_directories(options.outputDir, ec);
  if (ec || !fs::is_directory(options.outputDir))
    throw IoError("cannot create the output folder " + options.outputDir + ": " + ec.message());
  LoadedTaskModels loaded = loadTaskModels(options.models);
  summary.taskErrors = loaded.errors;
  summary.demoTasks = loaded.demoTasks;
  if (loaded.models.empty()) throw std::runtime_error("no model could be loaded: " + loaded.errors.front());

  std::unique_ptr<FrameSource> source = openFrameSource(options.input);
  const SourceInfo info = source->info();
  const std::string stemName = info.live ? "camera" : fs::path(options.input).stem().string();
  const fs::path stem = fs::path(options.outputDir) / stemName;
  const fs::path framesDir = fs::path(options.outputDir) / (stemName + "_frames");
  logger().info("{}: {}x{}, {:.3f} fps, {} frames, {}", options.input, info.width, info.height, info.fps,
                info.frameCount, info.codec);

  FramePipelineOptions pipeline;
  for (const LoadedTaskModel& m : loaded.models) pipeline.models.push_back({&m.model, m.inputSize});
  pipeline.personBoxes = options.personBoxes;
  pipeline.personBoxesByFrame = options.personBoxesByFrame;
  pipeline.selection = options.selection;
  nlohmann::json shardEntry;
  if (options.shard) {
    if (info.live) throw std::invalid_argument(options.input + ": a camera cannot be split into shards");
    if (info.frameCount <= 0)
      throw std::invalid_argument(
          options.input +
          ": its frame count is unknown, so it cannot be split into shards; give each "
          "job a frame range (--frames START:END) instead");
    pipeline.selection = shardSelection(options.selection, info.frameCount, *options.shard);
    const std::int64_t end =
        pipeline.selection.end >= 0 ? std::min(pipeline.selection.end, info.frameCount) : info.frameCount;
    shardEntry = {{"index", options.shard->index + 1},
                  {"count", options.shard->count},
                  {"frames_total", selectedFrameCount(options.selection, info.frameCount)},
                  {"first_frame", pipeline.selection.first},
                  {"end_frame", std::max(end, pipeline.selection.first)},
                  {"every", pipeline.selection.every}};
    logger().info("shard {} of {}: frames {} to {} (every {})", options.shard->index + 1,
                  options.shard->count, pipeline.selection.first, std::max(end, pipeline.selection.first) - 1,
                  pipeline.selection.every);
  }
  pipeline.batchSize = options.batchSize;
  if (options.smooth) pipeline.smoothing = SmoothingOptions{};

  KeypointPredictions keypoints;
  keypoints.video = fs::path(options.input).filename().string();
  if (std::find(summary.demoTasks.begin(), summary.demoTasks.end(), Task::Pose) != summary.demoTasks.end())
    keypoints.note = demo::kNotice;
  keypoints.numKeypoints = static_cast<int>(keypoints308().size());
  keypoints.keypointThreshold = options.exports.keypointThreshold;
  const bool posing = std::any_of(loaded.models.begin(), loaded.models.end(),
                                  [](const LoadedTaskModel& m) { return m.task == Task::Pose; });
  if (posing) pipeline.tracking = TrackingOptions{};

  std::unique_ptr<VideoWriter> writer;
  const std::string videoPath = options.videoOut.empty()
                                    ? stem.string() + shardSuffix(options.shard) + ".annotated.mp4"
                                    : withShardSuffix(options.videoOut, options.shard);
  std::optional<DepthRange> depthRange;  // one colour scale for the whole video: it only widens
  FrameExportOptions frameExport = options.exports;
  frameExport.overlays = false;
  frameExport.poseFiles = false;
  frameExport.demoTasks = summary.demoTasks;

  FramePipelineCallbacks pipelineCallbacks;
  pipelineCallbacks.isCancelled = callbacks.isCancelled;
  const std::int64_t expected = selectedFrameCount(pipeline.selection, info.live ? -1 : info.frameCount);
  pipelineCallbacks.onProgress = [&](const FramePipelineStats& stats) {
    if (callbacks.onProgress) callbacks.onProgress({stats, expected});
  };
  pipelineCallbacks.sink = [&](ProcessedFrame& p) {
    const FrameResult& r = p.result;
    const std::string frameName = fmt::format("{:06d}", p.frame.index);
    noteFrameProblems(r, p.frame.index, summary.frameProblems);
    if (posing) {
      keypoints.imageWidth = r.width;
      keypoints.imageHeight = r.height;
      keypoints.frames.push_back({frameName, r.poses});
    }
    if (options.perFrameFiles) {
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
      exportFrame(r, p.frame.bgr, (framesDir / frameName).string(), frameName, frameExport);
    }
    if (options.annotatedVideo) {
      const cv::Mat picture = annotatedPicture(r, p.frame.bgr, options.exports.keypointThreshold);
      if (!writer) {
        VideoWriterOptions w = videoWriterOptionsFor(info, picture.cols, picture.rows);
        if (!summary.demoTasks.empty()) w.comment = demo::kNotice;
        writer = std::make_unique<VideoWriter>(videoPath, w);
      }
      writer->write(picture, p.frame.timestampSeconds);
    }
  };

  summary.stats = runFramePipeline(*source, pipeline, pipelineCallbacks);

  // What was processed is kept, whatever ended the run.
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

  nlohmann::json manifest;
  manifest["tool"] = "sapiens-cli " + versionString();
  manifest["input"] = options.input;
  manifest["source"] = {{"width", info.width},       {"height", info.height}, {"fps", info.fps},
                        {"frames", info.frameCount}, {"live", info.live},     {"codec", info.codec}};
  manifest["device"] = loaded.models.front().model.device().str();
  manifest["dtype"] = computeDtypeName(loaded.models.front().model.dtype());
  manifest["dtype_requested"] = options.models.dtype.empty() ? "auto" : options.models.dtype;
  manifest["dtype_reason"] = computeDtypeReason(options.models.dtype, loaded.models.front().model.device());
  manifest["models"] = nlohmann::json::array();
  for (const LoadedTaskModel& m : loaded.models)
    manifest["models"].push_back(nlohmann::json::parse(describeTaskModelJson(m)));
  manifest["task_errors"] = summary.taskErrors;
  for (const auto& [task, p] : summary.frameProblems) {
    const std::string name(taskName(task));
    if (p.failedFrames)
      manifest["task_failures"][name] = {{"frames", p.failedFrames}, {"error", p.firstError}};
    if (p.warnedFrames)
      manifest["warnings"][name] = {{"frames", p.warnedFrames}, {"warning", p.firstWarning}};
  }
  manifest["demo_weights"] = !summary.demoTasks.empty();
  if (!summary.demoTasks.empty()) manifest["demo_weights_notice"] = demo::kNotice;
  const FramePipelineStats& s = summary.stats;
  manifest["frames"] = {
      {"decoded", s.decoded},       {"processed", s.processed},           {"dropped", s.dropped},
      {"fps", s.framesPerSecond()}, {"mean_latency_ms", s.meanLatencyMs}, {"max_latency_ms", s.maxLatencyMs}};
  manifest["outputs"] = {{"annotated_video", summary.annotatedVideo},
                         {"encoder", summary.encoder},
                         {"keypoints", summary.keypointsJson},
                         {"frames_folder", options.perFrameFiles ? framesDir.string() : ""}};
  manifest["smoothing"] = options.smooth;
  if (posing) manifest["tracks"] = s.tracks;
  if (options.shard) manifest["shard"] = shardEntry;
  manifest["cancelled"] = s.cancelled;
  if (!s.error.empty()) manifest["error"] = {{"stage", s.failedStage}, {"message", s.error}};
  summary.manifestPath = (fs::path(options.outputDir) / manifestNameFor(options.shard)).string();
  writeFileAtomically(summary.manifestPath, manifest.dump(2) + "\n");
  return summary;
}

}  // namespace sapiens
