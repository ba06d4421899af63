// sapiens-cli bench-stream: how close the frame pipeline comes to its slowest stage. Each stage is
// timed alone on the same frames (decode; analyse = pre-processing, forward, post-processing; sink =
// annotated picture + video encoding), then the whole pipeline; the figure is the end-to-end rate over
// the slowest stage's rate (1.00 = the other stages are completely hidden behind it). On a folder of
// pictures, `run` on them too, against the analysis alone.

#include "cli_command.h"
#include "input_size_option.h"

#include "sapiens/media/frame_source.h"
#include "sapiens/media/video_writer.h"
#include "sapiens/pipeline/frame_pipeline.h"
#include "sapiens/pipeline/task_models.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/run/batch_run.h"
#include "sapiens/run/frame_export.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include <unistd.h>

namespace sapiens::cli {
namespace {

struct BenchStreamOptions {
  std::string video;
  std::string task = "seg";
  std::string model;
  std::string inputSize;
  std::string device = "auto";
  std::int64_t frames = 12;
  std::size_t batch = 1;
  bool json = false;
};

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::vector<Frame> decodeFrames(const std::string& path, std::int64_t count) {
  std::unique_ptr<FrameSource> source = openFrameSource(path);
  std::vector<Frame> frames;
  while (static_cast<std::int64_t>(frames.size()) < count) {
    std::optional<Frame> frame = source->next();
    if (!frame) break;
    frames.push_back(std::move(*frame));
  }
  return frames;
}

// Seconds to analyse `frames` already in memory, in batches as the pipeline would; after one untimed
// pass (the first one pays for page faults, the allocator's growth and the thread pools' start).
double timeAnalysis(const LoadedTaskModel& m, const std::vector<Frame>& frames, std::size_t batch,
                    std::vector<FrameResult>& results) {
  results.assign(frames.size(), FrameResult{});
  FrameResult warmUp;
  analyzeTaskBatch(m.model.model(), {frames.front().bgr}, {&warmUp}, m.inputSize);
  const auto t0 = Clock::now();
  const std::size_t step = std::max<std::size_t>(1, batch);
  for (std::size_t first = 0; first < frames.size(); first += step) {
    std::vector<cv::Mat> images;
    std::vector<FrameResult*> outs;
    for (std::size_t i = first; i < std::min(frames.size(), first + step); ++i) {
      images.push_back(frames[i].bgr);
      outs.push_back(&results[i]);
    }
    analyzeTaskBatch(m.model.model(), images, outs, m.inputSize);
  }
  return secondsSince(t0);
}

// A folder of pictures: `sapiens-cli run` on the first `count` (read, analyse, write every result file),
// timed from its first picture (model loading left out), in pictures per second.
double timeFolderRun(const BenchStreamOptions& o, Task task, std::size_t count) {
  BatchRunOptions run;
  run.inputs = expandInputs({o.video});
  run.inputs.resize(std::min(run.inputs.size(), count));
  run.models.tasks = {task};
  run.models.modelPaths[task] = o.model;
  run.models.device = o.device;
  if (!o.inputSize.empty()) run.models.inputSize = inputSizeOption(o.inputSize);
  run.batchSize = o.batch;
  run.outputDir =
      (std::filesystem::temp_directory_path() / fmt::format("sapiens-bench-run-{}", ::getpid())).string();
  Clock::time_point runStart;
  BatchCallbacks runCallbacks;
  runCallbacks.onProgress = [&](const BatchProgress& p) {
    if (p.index == 0) runStart = Clock::now();
  };
  const BatchSummary summary = runBatch(run, runCallbacks);
  const double fps = static_cast<double>(summary.inputs.size()) / secondsSince(runStart);
  std::filesystem::remove_all(run.outputDir);
  for (const InputOutcome& outcome : summary.inputs)
    if (!outcome.ok) throw std::runtime_error(outcome.input + ": " + outcome.error);
  return fps;
}

struct StreamRates {
  std::size_t frames = 0;
  int width = 0, height = 0;
  double decode = 0, analyse = 0, sink = 0, endToEnd = 0, run = 0;
  double slowest() const { return std::min({decode, analyse, sink}); }
};

void printRates(const BenchStreamOptions& o, const LoadedTaskModel& m, const StreamRates& r) {
  const double ratio = r.endToEnd / r.slowest();
  if (o.json) {
    nlohmann::json j = {{"video", o.video},
                        {"frames", r.frames},
                        {"task", o.task},
                        {"model", o.model},
                        {"batch", o.batch},
                        {"decode_fps", r.decode},
                        {"analyse_fps", r.analyse},
                        {"sink_fps", r.sink},
                        {"end_to_end_fps", r.endToEnd},
                        {"slowest_stage_fps", r.slowest()},
                        {"ratio", ratio}};
    if (r.run > 0) {
      j["run_fps"] = r.run;
      j["run_over_analyse"] = r.run / r.analyse;
    }
    std::cout << j.dump() << "\n";
    return;
  }
  std::printf("frame pipeline  %s  %zu frames %dx%d  %s model  input %dx%d  batch %zu\n", o.video.c_str(),
              r.frames, r.width, r.height, o.task.c_str(), m.inputSize.height, m.inputSize.width, o.batch);
  std::printf("  decode alone     %10.2f frames/s\n", r.decode);
  std::printf("  analyse alone    %10.2f frames/s\n", r.analyse);
  std::printf("  sink alone       %10.2f frames/s (annotate + encode)\n", r.sink);
  std::printf("  end to end       %10.2f frames/s\n", r.endToEnd);
  std::printf("  ratio            %10.2f x the slowest stage (1.00 = the others fully hidden)\n", ratio);
  if (r.run > 0) {
    std::printf("  run (folder)     %10.2f frames/s: read, analyse, write every result file\n", r.run);
    std::printf("  run / analyse    %10.2f x the analysis alone\n", r.run / r.analyse);
  }
}

int runBenchStream(const BenchStreamOptions& o) {
  const std::optional<Task> task = parseTask(o.task);
  if (!task || *task == Task::Backbone)
    throw CLI::ValidationError("--task", "pose, seg, normal, albedo or pointmap");
  TaskModelRequest request;
  request.tasks = {*task};
  request.modelPaths[*task] = o.model;
  request.device = o.device;
  if (!o.inputSize.empty()) request.inputSize = inputSizeOption(o.inputSize);
  LoadedTaskModels loaded = loadTaskModels(request);
  if (loaded.models.empty()) throw std::runtime_error(loaded.errors.front());
  const LoadedTaskModel& m = loaded.models.front();
  const SourceInfo info = openFrameSource(o.video)->info();
  const std::string tempVideo =
      (std::filesystem::temp_directory_path() / fmt::format("sapiens-bench-stream-{}.mp4", ::getpid()))
          .string();

  // Decode alone.
  auto t0 = Clock::now();
  const std::vector<Frame> frames = decodeFrames(o.video, o.frames);
  const double decodeSeconds = secondsSince(t0);
  if (frames.empty()) throw std::runtime_error(o.video + ": no frame decoded");
  const auto n = static_cast<double>(frames.size());
  std::vector<FrameResult> results;
  const double analyseSeconds = timeAnalysis(m, frames, o.batch, results);

  // Sink alone: annotated pictures into a video.
  auto openWriter = [&] {
    return std::make_unique<VideoWriter>(
        tempVideo, videoWriterOptionsFor(info, frames.front().bgr.cols, frames.front().bgr.rows));
  };
  t0 = Clock::now();
  {
    auto writer = openWriter();
    for (std::size_t i = 0; i < frames.size(); ++i)
      writer->write(annotatedPicture(results[i], frames[i].bgr, kDefaultKeypointThreshold),
                    frames[i].timestampSeconds);
    writer->finish();
  }
  const double sinkSeconds = secondsSince(t0);

  // The whole pipeline on the same frames.
  std::unique_ptr<FrameSource> source = openFrameSource(o.video);
  FramePipelineOptions pipeline;
  pipeline.models = {{&m.model.model(), m.inputSize}};
  pipeline.batchSize = o.batch;
  pipeline.selection.maxFrames = static_cast<std::int64_t>(frames.size());
  std::unique_ptr<VideoWriter> writer = openWriter();
  FramePipelineCallbacks callbacks;
  callbacks.sink = [&](ProcessedFrame& p) {
    writer->write(annotatedPicture(p.result, p.frame.bgr, kDefaultKeypointThreshold),
                  p.frame.timestampSeconds);
  };
  const FramePipelineStats stats = runFramePipeline(*source, pipeline, callbacks);
  writer->finish();
  std::filesystem::remove(tempVideo);
  if (!stats.error.empty()) throw std::runtime_error(stats.failedStage + ": " + stats.error);

  StreamRates rates;
  rates.frames = frames.size();
  rates.width = frames.front().bgr.cols;
  rates.height = frames.front().bgr.rows;
  rates.decode = n / decodeSeconds;
  rates.analyse = n / analyseSeconds;
  rates.sink = n / sinkSeconds;
  rates.endToEnd = static_cast<double>(stats.processed) / stats.wallSeconds;
  if (std::filesystem::is_directory(o.video)) rates.run = timeFolderRun(o, *task, frames.size());
  printRates(o, m, rates);
  return kOk;
}

CliCommand benchStreamCommand("bench-stream", [](CLI::App& app) -> CommandAction {
  auto o = std::make_shared<BenchStreamOptions>();
  auto* sub =
      app.add_subcommand("bench-stream", "Throughput of the video pipeline against its slowest stage alone");
  sub->add_option("video", o->video,
                  "A video file, or a folder of pictures (then `run` on them is timed too)")
      ->required();
  sub->add_option("--task", o->task, "pose, seg, normal, albedo or pointmap")->capture_default_str();
  sub->add_option("--model", o->model, "Checkpoint of that task")->required();
  sub->add_option("--input-size", o->inputSize, "Network input HxW (default: the model's)");
  sub->add_option("--device", o->device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  sub->add_option("--frames", o->frames, "Frames to time")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--batch", o->batch, "Frames per forward pass")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_flag("--json", o->json, "One JSON object on stdout");
  return [o] { return runBenchStream(*o); };
});

}  // namespace
}  // namespace sapiens::cli
