// sapiens-cli soak: a long live session in one process, watched for leaks. Frames from a camera (the
// synthetic one by default) go through the frame pipeline with the chosen task models, and the sink draws
// the annotated picture and encodes it into a video, as `run --camera` does. Resident memory, open file
// descriptors and threads are sampled before the run, after a warm-up, every --sample-every frames, at
// the last frame and after the run; the verdict fails (exit 1) when resident memory grew by
// --max-rss-growth percent or more after the warm-up, when descriptors or threads grew after the warm-up,
// or when the run left descriptors open.

#include "cli_command.h"
#include "input_size_option.h"
#include "task_list_option.h"

#include "sapiens/media/frame_source.h"
#include "sapiens/media/video_writer.h"
#include "sapiens/pipeline/frame_pipeline.h"
#include "sapiens/pipeline/task_models.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/run/frame_export.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sapiens::cli {
namespace {

struct SoakArgs {
  std::int64_t frames = 10000;
  std::string source = "synthetic:160x120@240";
  std::string tasks = "seg,pose";
  std::string modelDir;
  std::map<Task, std::string> modelPaths;
  std::string inputSize;
  std::string device = "auto";
  std::int64_t warmupFrames = -1;  // -1: 5% of --frames
  std::int64_t sampleEvery = 1000;
  double maxRssGrowthPercent = 5;
  std::string videoOut;
  bool json = false;
};

/// What the process holds at one moment, from /proc/self.
struct Usage {
  std::int64_t rssKiB = 0;
  int fds = 0;
  int threads = 0;
};

std::int64_t statusField(const std::string& status, const std::string& key) {
  const auto at = status.find("\n" + key + ":");
  if (at == std::string::npos) throw std::runtime_error("/proc/self/status has no " + key + " line");
  return std::stoll(status.substr(at + key.size() + 2));
}

Usage sampleUsage() {
  std::ifstream in("/proc/self/status");
  std::stringstream text;
  text << "\n" << in.rdbuf();
  const std::string status = text.str();
  Usage u;
  u.rssKiB = statusField(status, "VmRSS");
  u.threads = static_cast<int>(statusField(status, "Threads"));
  // Without throwing (this runs on the pipeline's sink thread): a listing that fails, as when the
  // descriptors are exhausted, counts as "all of them", which the verdict reports as growth.
  int entries = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec))
    ++entries;
  u.fds = ec ? std::numeric_limits<int>::max() : entries - 1;  // less the listing's own descriptor
  return u;
}

struct Sample {
  std::string label;  // "before", "warm-up", "", "end", "after"
  std::int64_t frames = 0;
  double seconds = 0;
  std::int64_t dropped = 0;
  Usage usage;
};

void printRow(const Sample& s) {
  const double fps = s.seconds > 0 ? static_cast<double>(s.frames) / s.seconds : 0;
  std::string row =
      fmt::format("{:>8} {:>9.1f} {:>9.1f} {:>8} {:>10.1f} {:>5} {:>8}", s.frames, s.seconds, fps, s.dropped,
                  static_cast<double>(s.usage.rssKiB) / 1024.0, s.usage.fds, s.usage.threads);
  if (!s.label.empty()) row += "  " + s.label;
  std::cout << row << "\n" << std::flush;
}

nlohmann::json sampleJson(const Sample& s) {
  return {{"label", s.label},          {"frames", s.frames},        {"seconds", s.seconds},
          {"dropped", s.dropped},      {"rss_kib", s.usage.rssKiB}, {"fds", s.usage.fds},
          {"threads", s.usage.threads}};
}

LoadedTaskModels loadSoakModels(const SoakArgs& a) {
  TaskModelRequest request;
  request.tasks = parseTaskList(a.tasks);
  request.modelPaths = a.modelPaths;
  request.modelDir = a.modelDir;
  request.device = a.device;
  request.demoFallback = a.modelDir.empty();
  LoadedTaskModels loaded = loadTaskModels(request);
  if (!loaded.errors.empty()) throw std::runtime_error(loaded.errors.front());
  return loaded;
}

// Puts the models into `pipeline` at their input sizes; says which, for the report.
std::string modelSizes(const SoakArgs& a, LoadedTaskModels& loaded, FramePipelineOptions& pipeline) {
  std::string sizes;
  for (LoadedTaskModel& m : loaded.models) {
    if (!a.inputSize.empty() && !hasFixedInputSize(m.model.architecture()))
      m.inputSize = inputSizeOption(a.inputSize);
    pipeline.models.push_back({&m.model.model(), m.inputSize});
    sizes += fmt::format("{}{} {}x{}{}", sizes.empty() ? "" : ", ", taskName(m.task), m.inputSize.height,
                         m.inputSize.width, m.model.isDemoWeights() ? " (untrained demo weights)" : "");
  }
  return sizes;
}

struct SoakVerdict {
  double growth = 0;
  std::vector<std::string> problems;
  Sample warm, end;
};

// Growth after the warm-up (memory, descriptors, threads) and descriptors left open after the run.
SoakVerdict judge(const SoakArgs& a, const std::vector<Sample>& samples) {
  const auto find = [&](const char* label) {
    return *std::find_if(samples.begin(), samples.end(), [&](const Sample& s) { return s.label == label; });
  };
  const Sample before = find("before"), after = find("after");
  SoakVerdict v;
  v.warm = find("warm-up");
  v.end = find("end");
  v.growth = 100.0 * static_cast<double>(v.end.usage.rssKiB - v.warm.usage.rssKiB) /
             static_cast<double>(v.warm.usage.rssKiB);
  if (v.growth >= a.maxRssGrowthPercent)
    v.problems.push_back(fmt::format("resident memory grew {:.1f}% after the warm-up", v.growth));
  if (v.end.usage.fds > v.warm.usage.fds)
    v.problems.push_back(fmt::format("{} more file descriptors open", v.end.usage.fds - v.warm.usage.fds));
  if (v.end.usage.threads > v.warm.usage.threads)
    v.problems.push_back(fmt::format("{} more threads", v.end.usage.threads - v.warm.usage.threads));
  if (after.usage.fds > before.usage.fds)
    v.problems.push_back(
        fmt::format("{} file descriptors left open after the run", after.usage.fds - before.usage.fds));
  return v;
}

void printVerdict(const SoakArgs& a, std::int64_t warmup, const std::string& sizes,
                  const FramePipelineStats& stats, const std::vector<Sample>& samples, const SoakVerdict& v) {
  const bool pass = v.problems.empty();
  if (a.json) {
    nlohmann::json j = {{"source", a.source},
                        {"frames", a.frames},
                        {"warmup_frames", warmup},
                        {"models", sizes},
                        {"seconds", stats.wallSeconds},
                        {"dropped", stats.dropped},
                        {"rss_growth_percent", v.growth},
                        {"max_rss_growth_percent", a.maxRssGrowthPercent},
                        {"pass", pass},
                        {"problems", v.problems},
                        {"samples", nlohmann::json::array()}};
    for (const Sample& s : samples) j["samples"].push_back(sampleJson(s));
    std::cout << j.dump() << "\n";
    return;
  }
  std::cout << fmt::format(
      "soak: {}  rss {:.1f} -> {:.1f} MiB ({:+.1f}%, limit {:.0f}%)  fds {} -> {}  threads {} -> {}  ({} "
      "frames "
      "in {:.1f} s, {} dropped by the camera)\n",
      pass ? "PASS" : "FAIL", static_cast<double>(v.warm.usage.rssKiB) / 1024.0,
      static_cast<double>(v.end.usage.rssKiB) / 1024.0, v.growth, a.maxRssGrowthPercent, v.warm.usage.fds,
      v.end.usage.fds, v.warm.usage.threads, v.end.usage.threads, v.end.frames, v.end.seconds, stats.dropped);
  for (const std::string& p : v.problems) std::cout << "soak: " << p << "\n";
}

int runSoak(const SoakArgs& a) {
  const std::int64_t warmup = a.warmupFrames >= 0 ? a.warmupFrames : std::max<std::int64_t>(1, a.frames / 20);
  if (warmup >= a.frames)
    throw CLI::ValidationError("--warmup-frames",
                               fmt::format("{} is not below --frames {}", warmup, a.frames));

  LoadedTaskModels loaded = loadSoakModels(a);
  FramePipelineOptions pipeline;
  const std::string sizes = modelSizes(a, loaded, pipeline);

  std::unique_ptr<FrameSource> source = openFrameSource(a.source);
  const SourceInfo info = source->info();
  const bool tempVideo = a.videoOut.empty();
  const std::string videoPath =
      tempVideo
          ? (std::filesystem::temp_directory_path() / fmt::format("sapiens-soak-{}.mp4", ::getpid())).string()
          : a.videoOut;
  if (!a.json)
    std::cout << fmt::format("soak: {} frames from {} ({}x{}), {}; annotated video {}\n", a.frames, a.source,
                             info.width, info.height, sizes, videoPath)
              << fmt::format("{:>8} {:>9} {:>9} {:>8} {:>10} {:>5} {:>8}\n", "frames", "seconds", "frames/s",
                             "dropped", "rss MiB", "fds", "threads");

  std::vector<Sample> samples;
  auto record = [&](Sample s) {
    if (!a.json) printRow(s);
    samples.push_back(std::move(s));
  };
  record({"before", 0, 0, 0, sampleUsage()});

  std::unique_ptr<VideoWriter> writer;
  std::atomic<bool> reached{false};
  FramePipelineCallbacks callbacks;
  callbacks.sink = [&](ProcessedFrame& p) {
    const cv::Mat picture = annotatedPicture(p.result, p.frame.bgr, kDefaultKeypointThreshold);
    if (!writer) {
      writer =
          std::make_unique<VideoWriter>(videoPath, videoWriterOptionsFor(info, picture.cols, picture.rows));
    }
    writer->write(picture, p.frame.timestampSeconds);
  };
  // Samples are taken on the sink's thread right after a frame, so each sees the same stage of the run.
  callbacks.onProgress = [&](const FramePipelineStats& stats) {
    const std::int64_t n = stats.processed;
    if (reached || (n != warmup && n % a.sampleEvery != 0 && n != a.frames)) return;
    const char* label = n == warmup ? "warm-up" : (n == a.frames ? "end" : "");
    record({label, n, stats.wallSeconds, stats.dropped, sampleUsage()});
    if (n >= a.frames) reached = true;
  };
  callbacks.isCancelled = [&] { return reached.load(); };
  const FramePipelineStats stats = runFramePipeline(*source, pipeline, callbacks);
  if (writer) writer->finish();
  writer.reset();
  source.reset();
  if (tempVideo) std::filesystem::remove(videoPath);
  if (!stats.error.empty())
    throw std::runtime_error(fmt::format("the {} stage failed after {} frames: {}", stats.failedStage,
                                         stats.processed, stats.error));
  if (!reached)
    throw std::runtime_error(
        fmt::format("{} ended after {} of {} frames", a.source, stats.processed, a.frames));
  record({"after", stats.processed, stats.wallSeconds, stats.dropped, sampleUsage()});

  const SoakVerdict verdict = judge(a, samples);
  printVerdict(a, warmup, sizes, stats, samples, verdict);
  return verdict.problems.empty() ? kOk : kFailure;
}

CliCommand soakCommand("soak", [](CLI::App& app) -> CommandAction {
  auto a = std::make_shared<SoakArgs>();
  auto* sub = app.add_subcommand(
      "soak",
      "A long live session through the frame pipeline, checked for memory, descriptor and thread growth");
  sub->add_option("--frames", a->frames, "Frames to process")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--source", a->source, "Camera or video: synthetic:WxH@FPS, /dev/videoN, a file")
      ->capture_default_str();
  sub->add_option("--task", a->tasks, "Comma-separated: " + taskNames(headTasks()))->capture_default_str();
  sub->add_option("--model-dir", a->modelDir,
                  "Checkpoint root in the official layout (default: the demo weights)");
  addTaskModelOptions(sub, a);
  sub->add_option("--input-size", a->inputSize,
                  "Network input HxW (default: the model's; a pointmap head that fixes its own keeps it)");
  sub->add_option("--device", a->device, "cpu, cuda, cuda:N or auto")->capture_default_str();
  sub->add_option("--warmup-frames", a->warmupFrames,
                  "Frames before the baseline sample (default: 5% of --frames)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--sample-every", a->sampleEvery, "Frames between samples")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--max-rss-growth", a->maxRssGrowthPercent,
                  "Percent of resident-memory growth after the warm-up that fails the soak")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--video-out", a->videoOut,
                  "Keep the annotated video here (default: a temporary file, removed)");
  sub->add_flag("--json", a->json, "One JSON object on stdout instead of the table");
  return [a] { return runSoak(*a); };
});

}  // namespace
}  // namespace sapiens::cli
