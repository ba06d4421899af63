#include "sapiens/pipeline/frame_pipeline.h"

#include "sapiens/common/log.h"
#include "sapiens/common/threads.h"
#include "sapiens/model/model.h"
#include "sapiens/pipeline/frame_queue.h"
#include "sapiens/pipeline/task_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace sapiens {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct CapturedFrame {
  Frame frame;
  Clock::time_point captured;
};

// The first failure wins; later ones (usually consequences of the stop) are only logged.
class Failure {
 public:
  void set(const char* stage, const std::string& message) {
    std::lock_guard lock(mutex_);
    logger().error("frame pipeline, {} stage: {}", stage, message);
    if (!stage_.empty()) return;
    stage_ = stage;
    message_ = message;
  }
  void copyTo(FramePipelineStats& stats) {
    std::lock_guard lock(mutex_);
    stats.failedStage = stage_;
    stats.error = message_;
  }

 private:
  std::mutex mutex_;
  std::string stage_, message_;
};

// Decides, frame by frame, what the selection keeps and when the stream is over.
class SelectionFilter {
 public:
  explicit SelectionFilter(const FrameSelection& s) : s_(s) {}
  bool finished(std::int64_t index) const {
    return (s_.end >= 0 && index >= s_.end) || (s_.maxFrames >= 0 && taken_ >= s_.maxFrames);
  }
  bool keep(std::int64_t index) {
    if (index < s_.first || (index - s_.first) % s_.every != 0) return false;
    ++taken_;
    return true;
  }
  bool exhausted() const { return s_.maxFrames >= 0 && taken_ >= s_.maxFrames; }

 private:
  FrameSelection s_;
  std::int64_t taken_ = 0;
};

// The user's boxes for frame `index`: its own list, else those for every frame, else none (automatic).
PictureBoxes userBoxesFor(const FramePipelineOptions& options, std::int64_t index) {
  if (const auto found = options.personBoxesByFrame.find(index); found != options.personBoxesByFrame.end())
    return found->second;
  if (!options.personBoxes.empty()) return options.personBoxes;
  return std::nullopt;
}

}  // namespace

FramePipelineStats runFramePipeline(FrameSource& source, const FramePipelineOptions& options,
                                    const FramePipelineCallbacks& callbacks) {
  if (options.models.empty()) throw std::invalid_argument("frame pipeline: no task model");
  for (const TaskModel& m : options.models)
    if (m.model == nullptr) throw std::invalid_argument("frame pipeline: a task model is missing");
  const FrameSelection& selection = options.selection;
  if (selection.first < 0 || selection.every < 1 || (selection.end >= 0 && selection.end < selection.first))
    throw std::invalid_argument(fmt::format("frame pipeline: bad frame selection {}:{} every {}",
                                            selection.first, selection.end, selection.every));

  const bool live = source.info().live;
  const std::size_t batchSize = live ? 1 : std::max<std::size_t>(1, options.batchSize);
  const auto started = Clock::now();
  FramePipelineStats stats;
  Failure failure;
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> decoded{0}, sourceGaps{0};
  std::atomic<double> decodeBusy{0}, analyseBusy{0};

  BoundedQueue<CapturedFrame> decodedFrames(options.queueCapacity);
  LatestSlot<CapturedFrame> latestFrame;
  BoundedQueue<ProcessedFrame> analysedFrames(options.queueCapacity);
  auto stopAll = [&] {
    stop = true;
    decodedFrames.close();
    latestFrame.close();
    analysedFrames.close();
  };

  const int helperNiceness = threads::thisThreadNiceness() + threads::kHelperNicenessStep;
  std::thread decoder([&] {
    threads::lowerThisThreadPriority(helperNiceness);
    SelectionFilter filter(selection);
    std::int64_t lastIndex = -1;
    try {
      if (!live && selection.first > 0 && source.seekable()) source.seek(selection.first);
      while (!stop) {
        const auto t0 = Clock::now();
        std::optional<Frame> frame = source.next();
        decodeBusy = decodeBusy + (live ? 0.0 : secondsSince(t0));
        if (!frame || filter.finished(frame->index)) break;
        if (live && lastIndex >= 0 && frame->index > lastIndex + 1)
          sourceGaps += frame->index - lastIndex - 1;
        lastIndex = frame->index;
        if (!filter.keep(frame->index)) continue;
        ++decoded;
        CapturedFrame captured{std::move(*frame), Clock::now()};
        if (!(live ? latestFrame.push(std::move(captured)) : decodedFrames.push(std::move(captured)))) break;
        if (filter.exhausted()) break;
      }
    } catch (const std::exception& e) {
      failure.set("decode", e.what());  // the frames already decoded still go through
    }
    decodedFrames.close();
    latestFrame.close();
  });

  std::thread analyser([&] {
    try {
      while (!stop) {
        std::vector<CapturedFrame> batch;
        std::optional<CapturedFrame> first = live ? latestFrame.pop() : decodedFrames.pop();
        if (!first || stop) break;
        batch.push_back(std::move(*first));
        while (batch.size() < batchSize) {
          std::optional<CapturedFrame> more = decodedFrames.tryPop();
          if (!more) break;
          batch.push_back(std::move(*more));
        }
        const auto t0 = Clock::now();
        std::vector<ProcessedFrame> processed(batch.size());
        std::vector<cv::Mat> images;
        std::vector<FrameResult*> results;
        for (std::size_t i = 0; i < batch.size(); ++i) {
          images.push_back(batch[i].frame.bgr);
          results.push_back(&processed[i].result);
        }
        std::vector<PictureBoxes> boxes;
        for (const CapturedFrame& captured : batch)
          boxes.push_back(userBoxesFor(options, captured.frame.index));
        // A task that fails on these frames fails there only (the others' results go on); should every
        // task fail, the run stops with that error as before.
        for (const TaskModel& m : options.models) {
          try {
            const auto sources = analyzeTaskBatch(*m.model, images, results, m.inputSize, boxes);
            for (std::size_t i = 0; i < batch.size(); ++i)
              if (!sources[i].empty()) processed[i].personBoxSource = sources[i];
          } catch (const std::exception& e) {
            for (FrameResult* r : results) r->taskErrors[m.model->task()] = e.what();
          }
        }
        if (std::all_of(results.begin(), results.end(),
                        [&](const FrameResult* r) { return r->taskErrors.size() >= options.models.size(); }))
          throw std::runtime_error(results.front()->taskErrors.begin()->second);
        analyseBusy = analyseBusy + secondsSince(t0);
        for (std::size_t i = 0; i < batch.size(); ++i) {
          processed[i].frame = std::move(batch[i].frame);
          processed[i].latencyMs =
              std::chrono::duration<double, std::milli>(Clock::now() - batch[i].captured).count();
          if (!analysedFrames.push(std::move(processed[i]))) return;
        }
      }
    } catch (const std::exception& e) {
      failure.set("analyse", e.what());
      stopAll();
    }
    analysedFrames.close();
  });

  std::atomic<bool> sinkDone{false};
  std::thread sinkStage([&] {
    threads::lowerThisThreadPriority(helperNiceness);
    std::optional<PersonTracker> tracker;
    if (options.tracking) tracker.emplace(*options.tracking);
    std::optional<TemporalSmoother> smoother;
    if (options.smoothing) smoother.emplace(*options.smoothing);
    double latencySum = 0;
    while (!stop) {
      std::optional<ProcessedFrame> item = analysedFrames.popFor(std::chrono::milliseconds(50));
      if (!item) {
        if (analysedFrames.closed()) break;
        continue;
      }
      const auto t0 = Clock::now();
      try {
        if (tracker) {
          tracker->assign(item->result);
          stats.tracks = tracker->tracksStarted();
        }
        if (smoother) smoother->apply(item->result, item->frame.timestampSeconds);
        item->latencyMs =
            std::chrono::duration<double, std::milli>(Clock::now() - t0).count() + item->latencyMs;
        if (callbacks.sink) callbacks.sink(*item);
      } catch (const std::exception& e) {
        failure.set("sink", e.what());
        stopAll();
        break;
      }
      stats.sinkBusySeconds += secondsSince(t0);
      ++stats.processed;
      latencySum += item->latencyMs;
      stats.maxLatencyMs = std::max(stats.maxLatencyMs, item->latencyMs);
      stats.meanLatencyMs = latencySum / static_cast<double>(stats.processed);
      stats.decoded = decoded;
      stats.dropped = sourceGaps + latestFrame.dropped();
      stats.wallSeconds = secondsSince(started);
      if (callbacks.onProgress) callbacks.onProgress(stats);
    }
    sinkDone = true;
  });
  // The caller's thread only watches for a cancel.
  while (!sinkDone) {
    if (callbacks.isCancelled && callbacks.isCancelled()) {
      stats.cancelled = true;  // the sink thread never writes this field
      stopAll();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  sinkStage.join();
  decoder.join();
  analyser.join();

  stats.decoded = decoded;
  stats.dropped = sourceGaps + latestFrame.dropped();
  stats.decodeBusySeconds = decodeBusy;
  stats.analyseBusySeconds = analyseBusy;
  stats.wallSeconds = secondsSince(started);
  failure.copyTo(stats);
  return stats;
}

}  // namespace sapiens
