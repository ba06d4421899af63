// sapiens-cli run: pictures (files, folders) through the task models, with every result exported.

#include "cli_command.h"
#include "input_size_option.h"
#include "motion_options.h"
#include "stop_signals.h"
#include "task_list_option.h"

#include "sapiens/common/log.h"
#include "sapiens/media/image_io.h"
#include "sapiens/model/demo_weights.h"
#include "sapiens/pipeline/person_box_file.h"
#include "sapiens/pipeline/person_boxes.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/run/batch_run.h"
#include "sapiens/run/video_run.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

namespace sapiens::cli {
namespace {

std::atomic<bool> interrupted{false};

// "coco17,openpose" -> the formats. Throws CLI::ValidationError (exit code 2) on an unknown name.
std::vector<KeypointFormat> keypointFormatList(const std::string& text) {
  std::vector<KeypointFormat> formats;
  std::stringstream in(text);
  for (std::string name; std::getline(in, name, ',');) {
    const auto format = parseKeypointFormat(name);
    if (!format)
      throw CLI::ValidationError("--keypoint-format",
                                 "unknown keypoint format '" + name + "' (coco17, wholebody, openpose)");
    formats.push_back(*format);
  }
  return formats;
}

struct RunArgs {
  std::vector<std::string> inputs;
  std::string tasks = "pose,seg,normal,albedo,pointmap";
  std::string output;
  std::string modelDir;
  std::map<Task, std::string> modelPaths;
  bool noDemoWeights = false;
  std::string size = "0.4b";
  std::string inputSize;
  std::string device = "auto";
  std::string dtype = "auto";
  std::size_t batch = 1;
  std::size_t overlapMb = 1024;
  std::string shard;
  float keypointThreshold = kDefaultKeypointThreshold;
  std::vector<std::string> boxes;
  std::string boxFile;
  std::string ply = "binary";
  bool plyFaces = false;
  bool glb = false;
  std::string keypointFormats;
  bool noOverlay = false;
  // Videos and cameras
  std::string camera;
  std::string frames;
  std::int64_t every = 1;
  std::int64_t maxFrames = -1;
  std::string videoOut;
  bool smooth = false;
  bool motion = false;
  std::shared_ptr<MotionArgs> motionArgs = std::make_shared<MotionArgs>();
};

void showProgress(const BatchProgress& p, bool terminal) {
  if (terminal) {
    const int width = 30;
    const int filled = p.total ? static_cast<int>(width * p.index / p.total) : width;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %s\033[K", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), p.index, p.total, p.input.c_str());
    if (p.index == p.total) std::fprintf(stderr, "\n");
  } else if (p.index < p.total) {
    std::fprintf(stderr, "[%zu/%zu] %s\n", p.index + 1, p.total, p.input.c_str());
  }
  std::fflush(stderr);
}

// START:END with either side optional ("100:", ":250", "10:20").
FrameSelection parseFrameRange(const std::string& text, std::int64_t every, std::int64_t maxFrames) {
  FrameSelection s;
  s.every = every;
  s.maxFrames = maxFrames;
  if (text.empty()) return s;
  const auto colon = text.find(':');
  auto number = [&](const std::string& part, std::int64_t fallback) -> std::int64_t {
    if (part.empty()) return fallback;
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
    }
    if (used != part.size() || v < 0)
      throw CLI::ValidationError("--frames", "'" + text + "' is not START:END with frame numbers >= 0");
    return v;
  };
  if (colon == std::string::npos)
    throw CLI::ValidationError("--frames", "'" + text + "' is not START:END (e.g. 100:250, 100:, :250)");
  s.first = number(text.substr(0, colon), 0);
  s.end = number(text.substr(colon + 1), -1);
  if (s.end >= 0 && s.end <= s.first)
    throw CLI::ValidationError("--frames", "'" + text + "': END must be after START");
  return s;
}

bool isVideoInput(const std::vector<std::string>& inputs) {
  if (inputs.size() != 1) return false;
  std::error_code ec;
  const std::string& input = inputs.front();
  return !std::filesystem::is_directory(input, ec) && !hasImageExtension(input) &&
         std::filesystem::is_regular_file(input, ec);
}

void showVideoProgress(const VideoRunProgress& p, bool terminal) {
  const FramePipelineStats& s = p.stats;
  const double fps = s.framesPerSecond();
  std::string eta = "?";
  if (p.expectedFrames > 0 && fps > 0) {
    const auto left = static_cast<long long>((p.expectedFrames - s.processed) / fps);
    eta = fmt::format("{}:{:02d}", left / 60, left % 60);
  }
  const std::string line =
      p.expectedFrames > 0
          ? fmt::format("{}/{} frames  {:.2f} frames/s  ETA {}", s.processed, p.expectedFrames, fps, eta)
          : fmt::format("{} frames  {:.2f} frames/s  {} dropped  latency {:.0f} ms", s.processed, fps,
                        s.dropped, s.meanLatencyMs);
  if (terminal)
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
  else if (s.processed % 25 == 1)
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

// The banner of a run whose results came (partly) from the untrained demo weights.
void reportDemoWeights(const std::vector<Task>& tasks) {
  if (tasks.empty()) return;
  std::string names;
  for (Task t : tasks) names += (names.empty() ? "" : ", ") + std::string(taskName(t));
  std::cerr << "NOTE: " << names << " ran on " << demo::kNotice
            << ". results.json records \"demo_weights\": true. For real results put the official "
               "checkpoints under $SAPIENS_CHECKPOINT_ROOT (default ~/sapiens2_host) or pass --model-dir / "
               "--TASK-model.\n";
}

int runVideoCommand(const RunArgs& a, const BatchRunOptions& batch,
                    const std::map<std::int64_t, std::vector<BoundingBox>>& boxesByFrame) {
  VideoRunOptions options;
  options.input = a.camera.empty() ? a.inputs.front() : a.camera;
  options.models = batch.models;
  options.outputDir = batch.outputDir;
  options.videoOut = a.videoOut;
  options.annotatedVideo = !a.noOverlay || !a.videoOut.empty();
  options.selection = parseFrameRange(a.frames, a.every, a.maxFrames);
  options.batchSize = batch.batchSize;
  options.smooth = a.smooth;
  options.shard = batch.shard;
  options.personBoxes = batch.personBoxes;
  options.personBoxesByFrame = boxesByFrame;
  options.exports = batch.exports;
  if (a.motion) options.motion = motionOptions(*a.motionArgs);

  const bool terminal = isatty(STDERR_FILENO);
  VideoRunCallbacks callbacks;
  callbacks.onProgress = [terminal](const VideoRunProgress& p) { showVideoProgress(p, terminal); };
  callbacks.isCancelled = [] { return interrupted.load(); };
  const VideoRunSummary summary = runVideo(options, callbacks);
  if (terminal) std::fprintf(stderr, "\n");
  reportDemoWeights(summary.demoTasks);
  const FramePipelineStats& s = summary.stats;
  std::cout << fmt::format("run: {} frame(s) processed, {:.2f} frames/s", s.processed, s.framesPerSecond());
  if (s.dropped) std::cout << ", " << s.dropped << " dropped";
  if (!summary.annotatedVideo.empty())
    std::cout << "; video " << summary.annotatedVideo << " (" << summary.encoder << ")";
  if (s.cancelled) std::cout << " (cancelled)";
  std::cout << "; manifest " << summary.manifestPath << "\n";
  for (const auto& e : summary.taskErrors) std::cerr << "task failed: " << e << "\n";
  if (summary.motion) printMotionSummary(*summary.motion);
  if (!summary.motionError.empty()) std::cerr << "motion failed: " << summary.motionError << "\n";
  bool taskFailed = !summary.motionError.empty();
  for (const auto& [task, p] : summary.frameProblems) {
    if (p.failedFrames) {
      std::cerr << "task failed: " << taskName(task) << " on " << p.failedFrames
                << " frame(s): " << p.firstError << "\n";
      taskFailed = true;
    }
    if (p.warnedFrames) std::cerr << "warning: " << p.warnedFrames << " frame(s): " << p.firstWarning << "\n";
  }
  if (!s.error.empty()) {
    std::cerr << "failed (" << s.failedStage << "): " << s.error << "\n";
    return s.processed > 0 ? kPartial : kFailure;
  }
  return !summary.taskErrors.empty() || taskFailed || s.cancelled ? kPartial : kOk;
}

// Motion needs 3-D keypoints of every frame of the clip.
void requireMotionTasks(const std::vector<Task>& tasks, bool sharded) {
  const auto has = [&](Task t) { return std::find(tasks.begin(), tasks.end(), t) != tasks.end(); };
  if (!has(Task::Pose) || !has(Task::Pointmap))
    throw CLI::ValidationError("--motion", "needs --task pose,pointmap (3-D keypoints)");
  if (sharded)
    throw CLI::ValidationError("--motion",
                               "a shard has only part of the clip: run `sapiens-cli motion` on the "
                               "merged STEM.pose.json");
}

// K/N with 1 <= K <= N.
Shard parseShard(const std::string& text) {
  unsigned long k = 0, n = 0;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> k >> slash >> n) || slash != '/' || !in.eof() || n == 0 || k == 0 || k > n)
    throw CLI::ValidationError("--shard", "'" + text + "' is not K/N with 1 <= K <= N, e.g. 3/8");
  return {k - 1, n};
}

int runRun(const RunArgs& a) {
  if (a.inputs.empty() == a.camera.empty())
    throw CLI::ValidationError("inputs", "give pictures, folders or one video file, or --camera DEVICE");
  BatchRunOptions options;
  options.inputs = a.inputs;
  options.models.tasks = parseTaskList(a.tasks);
  options.outputDir = a.output;
  options.models.modelDir = a.modelDir;
  options.models.modelPaths = a.modelPaths;
  // The demo weights stand in only when the user named no folder: a --model-dir without the checkpoint
  // fails its task.
  options.models.demoFallback = a.modelDir.empty() && !a.noDemoWeights;
  options.models.size = a.size;
  if (!a.inputSize.empty()) options.models.inputSize = inputSizeOption(a.inputSize);
  options.models.device = a.device;
  options.models.dtype = a.dtype;
  options.batchSize = a.batch;
  options.overlapBytes = a.overlapMb << 20;
  if (!a.shard.empty()) options.shard = parseShard(a.shard);
  options.exports.keypointThreshold = a.keypointThreshold;
  for (const auto& b : a.boxes) options.personBoxes.push_back(parseBox(b));
  PersonBoxFile boxFile;
  if (!a.boxFile.empty()) {
    boxFile = readPersonBoxFile(a.boxFile);
    options.personBoxes.insert(options.personBoxes.end(), boxFile.everyFrame.begin(),
                               boxFile.everyFrame.end());
  }
  options.exports.plyEncoding = a.ply == "ascii" ? PlyEncoding::Ascii : PlyEncoding::BinaryLittleEndian;
  options.exports.plyFaces = a.plyFaces;
  options.exports.glb = a.glb;
  options.exports.keypointFormats = keypointFormatList(a.keypointFormats);
  options.exports.overlays = !a.noOverlay;

  onStopSignals([](int) { interrupted = true; });
  if (!a.camera.empty() || isVideoInput(a.inputs)) {
    if (options.shard && !a.camera.empty())
      throw CLI::ValidationError("--shard", "a camera cannot be split into shards");
    if (options.shard && a.smooth)
      throw CLI::ValidationError("--shard",
                                 "cannot be combined with --smooth (each shard would smooth without "
                                 "the frames before its first)");
    if (a.motion) requireMotionTasks(options.models.tasks, options.shard.has_value());
    return runVideoCommand(a, options, boxFile.byFrame);
  }
  if (!boxFile.byFrame.empty())
    throw CLI::ValidationError("--bbox-file",
                               a.boxFile + " gives boxes per frame, which apply to one video file");
  if (!a.frames.empty() || !a.videoOut.empty() || a.smooth || a.motion || a.every != 1 || a.maxFrames >= 0)
    throw CLI::ValidationError("--frames/--every/--max-frames/--video-out/--smooth/--motion",
                               "only apply to one video file or --camera");
  const bool terminal = isatty(STDERR_FILENO);
  BatchCallbacks callbacks;
  callbacks.onProgress = [terminal](const BatchProgress& p) { showProgress(p, terminal); };
  callbacks.isCancelled = [] { return interrupted.load(); };

  const BatchSummary summary = runBatch(options, callbacks);
  reportDemoWeights(summary.demoTasks);
  const std::size_t failed = summary.failedCount();
  std::cout << "run: " << summary.inputs.size() - failed << " of " << summary.inputs.size()
            << " picture(s) done";
  const std::size_t partial = summary.partialCount();
  if (partial) std::cout << " (" << partial << " with a task failed)";
  if (failed) std::cout << ", " << failed << " failed";
  if (!summary.taskErrors.empty()) std::cout << ", " << summary.taskErrors.size() << " task(s) could not run";
  if (summary.cancelled) std::cout << " (cancelled)";
  std::cout << "; manifest " << summary.manifestPath << "\n";
  for (const auto& o : summary.inputs) {
    if (!o.ok) std::cerr << "failed: " << o.input << ": " << o.error << "\n";
    for (const auto& [task, error] : o.taskErrors)
      std::cerr << "task failed: " << taskName(task) << " on " << o.input << ": " << error << "\n";
    for (const auto& [task, warning] : o.warnings)
      std::cerr << "warning: " << o.input << ": " << warning << "\n";
  }
  for (const auto& e : summary.taskErrors) std::cerr << "task failed: " << e << "\n";
  if (summary.inputs.empty()) {
    std::cerr << "run: no pictures found in the inputs given\n";
    return kFailure;
  }
  if (failed == summary.inputs.size()) return kFailure;
  return failed || partial || !summary.taskErrors.empty() || summary.cancelled ? kPartial : kOk;
}

CliCommand runCommand("run", [](CLI::App& app) -> CommandAction {
  auto a = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "Run task models on pictures and export every result");
  sub->add_option("inputs", a->inputs,
                  "Image files or folders (searched recursively, sorted), or one video file");
  sub->add_option("--camera", a->camera, "Run on a live camera (e.g. /dev/video0) until Ctrl+C");
  sub->add_option("--frames", a->frames, "Video frames START:END (END exclusive; either may be omitted)");
  sub->add_option("--every", a->every, "Video: process every N-th frame")->check(CLI::PositiveNumber);
  sub->add_option("--max-frames", a->maxFrames, "Video: stop after N frames")->check(CLI::NonNegativeNumber);
  sub->add_option("--video-out", a->videoOut,
                  "Video: the annotated video (default OUTPUT/STEM.annotated.mp4)");
  sub->add_flag("--smooth", a->smooth, "Video: temporal smoothing (One-Euro keypoints, edge-aware maps)");
  sub->add_flag(
      "--motion", a->motion,
      "Video: joint angles, TRC, MOT, BVH, CSV and a plot per tracked person (needs --task pose,pointmap)");
  addMotionOptions(sub, a->motionArgs);
  sub->add_option("--task", a->tasks, "Comma-separated, of " + taskNames(headTasks()))->capture_default_str();
  sub->add_option("-o,--output", a->output, "Output folder")->required();
  sub->add_option(
      "--model-dir", a->modelDir,
      "Checkpoint root in the official layout (default $SAPIENS_CHECKPOINT_ROOT or ~/sapiens2_host)");
  addTaskModelOptions(sub, a);
  sub->add_flag("--no-demo-weights", a->noDemoWeights,
                "Fail a task whose checkpoint is missing instead of running the untrained demo weights");
  sub->add_option("--size", a->size, "Preferred official size when looking up checkpoints")
      ->capture_default_str();
  sub->add_option("--input-size", a->inputSize,
                  "Network input HxW (default 1024x768, or what the checkpoint fixes)");
  sub->add_option("--device", a->device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  sub->add_option(
         "--dtype", a->dtype,
         "auto, fp32, bf16 or fp16 (auto: bf16 on CUDA; on the CPU bf16 where it has native bf16 and "
         "runs it faster, else fp32)")
      ->capture_default_str();
  ;
  sub->add_option("--batch", a->batch, "Pictures per forward pass (pose: their person crops together)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{256}))
      ->capture_default_str();
  sub->add_option("--overlap-memory", a->overlapMb,
                  "MB for reading the next pictures and writing the last results while the models run (0: "
                  "one after the other)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 30))
      ->capture_default_str();
  sub->add_option("--shard", a->shard,
                  "Only part K of N of the sorted pictures, or of one video's selected frames (1-based; then "
                  "`sapiens-cli "
                  "merge OUTPUT`)");
  sub->add_option("--kpt-thr", a->keypointThreshold, "Keypoint score threshold for overlays")
      ->capture_default_str();
  sub->add_option("--bbox", a->boxes, "Person box x1,y1,x2,y2 for pose (repeatable)");
  sub->add_option("--bbox-file", a->boxFile,
                  "JSON person boxes: [[x1,y1,x2,y2], ...] for every picture, or "
                  "{\"frames\": [{\"frame\": N, \"boxes\": [...]}, ...]} per video frame");
  sub->add_option("--ply", a->ply, "PLY encoding")
      ->check(CLI::IsMember({"binary", "ascii"}))
      ->capture_default_str();
  sub->add_flag("--ply-faces", a->plyFaces, "Add grid-mesh faces to the PLY (broken at depth jumps)");
  sub->add_option(
      "--keypoint-format", a->keypointFormats,
      "Pose also as other layouts, comma-separated: coco17, wholebody (COCO-WholeBody-133), openpose "
      "(BODY_25 + hands + face); a video writes them per frame, with track ids");
  sub->add_flag("--glb", a->glb, "Also write the pointmap's mesh as binary glTF, STEM.glb (vertex colours)");
  sub->add_flag("--no-overlay", a->noOverlay, "Do not write overlay pictures");
  return [a] { return runRun(*a); };
});

}  // namespace
}  // namespace sapiens::cli
