#include "sapiens/pipeline/frame_pipeline.h"

#include "sapiens/common/log.h"
#include "sapiens/common/threads.h"
#include "sapiens/model/forward_interrupt.h"
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

void checkOptions(const FramePipelineOptions& options) {
  if (options.models.empty()) throw std::invalid_argument("frame pipeline: no task model");
  for (const TaskModel& m : options.models)
    if (m.model == nullptr) throw std::invalid_argument("frame pipeline: a task model is missing");
  const FrameSelection& selection = options.selection;
  if (selection.first < 0 || selection.every < 1 || (selection.end >= 0 && selection.end < selection.first))
    throw std::invalid_argument(fmt::format("frame pipeline: bad frame selection {}:{} every {}",
                                            selection.first, selection.end, selection.every));
}

// The three stages and what they share: decode -> analyse -> sink, each on its own thread.
class PipelineRun {
 public:
  PipelineRun(FrameSource& source, const FramePipelineOptions& options,
              const FramePipelineCallbacks& callbacks)
      : source_(source),
        options_(options),
        callbacks_(callbacks),
        live_(source.info().live),
        batchSize_(live_ ? 1 : std::max<std::size_t>(1, options.batchSize)),
        helperNiceness_(threads::thisThreadNiceness() + threads::kHelperNicenessStep),
        interrupt_(options.interrupt ? options.interrupt : forwardInterruptFlag()),
        decodedFrames_(options.queueCapacity),
        analysedFrames_(options.queueCapacity) {}

  FramePipelineStats run() {
    std::thread decoder([this] { decode(); });
    std::thread analyser([this] { analyse(); });
    std::thread sinkStage([this] { sink(); });
    // The caller's thread only watches for a cancel or the job's interrupt.
    while (!sinkDone_) {
      if ((callbacks_.isCancelled && callbacks_.isCancelled()) || interruptRequested()) {
        stats_.cancelled = true;  // the sink thread never writes this field
        stopAll();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    sinkStage.join();
    decoder.join();
    analyser.join();
    stats_.decoded = decoded_;
    stats_.dropped = sourceGaps_ + latestFrame_.dropped();
    stats_.decodeBusySeconds = decodeBusy_;
    stats_.analyseBusySeconds = analyseBusy_;
    stats_.wallSeconds = secondsSince(started_);
    failure_.copyTo(stats_);
    if (interrupted_) stats_.cancelled = true;  // a stop asked for, not a failure
    return stats_;
  }

 private:
  bool interruptRequested() const { return interrupt_ && interrupt_->load(); }

  void stopAll() {
    stop_ = true;
    decodedFrames_.close();
    latestFrame_.close();
    analysedFrames_.close();
  }

  void decode() {
    threads::lowerThisThreadPriority(helperNiceness_);
    const FrameSelection& selection = options_.selection;
    SelectionFilter filter(selection);
    std::int64_t lastIndex = -1;
    try {
      if (!live_ && selection.first > 0 && source_.seekable()) source_.seek(selection.first);
      while (!stop_) {
        const auto t0 = Clock::now();
        std::optional<Frame> frame = source_.next();
        decodeBusy_ = decodeBusy_ + (live_ ? 0.0 : secondsSince(t0));
        if (!frame || filter.finished(frame->index)) break;
        if (live_ && lastIndex >= 0 && frame->index > lastIndex + 1)
          sourceGaps_ += frame->index - lastIndex - 1;
        lastIndex = frame->index;
        if (!filter.keep(frame->index)) continue;
        ++decoded_;
        CapturedFrame captured{std::move(*frame), Clock::now()};
        if (!(live_ ? latestFrame_.push(std::move(captured)) : decodedFrames_.push(std::move(captured))))
          break;
        if (filter.exhausted()) break;
      }
    } catch (const std::exception& e) {
      failure_.set("decode", e.what());  // the frames already decoded still go through
    }
    decodedFrames_.close();
    latestFrame_.close();
  }

  // The next frames to analyse: one, and (files) as many more as are decoded, up to the batch size.
  std::vector<CapturedFrame> nextBatch() {
    std::vector<CapturedFrame> batch;
    std::optional<CapturedFrame> first = live_ ? latestFrame_.pop() : decodedFrames_.pop();
    if (!first || stop_) return batch;
    batch.push_back(std::move(*first));
    while (batch.size() < batchSize_) {
      std::optional<CapturedFrame> more = decodedFrames_.tryPop();
      if (!more) break;
      batch.push_back(std::move(*more));
    }
    return batch;
  }

  // A task that fails on these frames fails there only (the others' results go on); should every task
  // fail, the run stops with that error.
  std::vector<ProcessedFrame> analyseBatch(const std::vector<CapturedFrame>& batch) {
    std::vector<ProcessedFrame> processed(batch.size());
    std::vector<cv::Mat> images;
    std::vector<FrameResult*> results;
    std::vector<PictureBoxes> boxes;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      images.push_back(batch[i].frame.bgr);
      results.push_back(&processed[i].result);
      boxes.push_back(userBoxesFor(options_, batch[i].frame.index));
    }
    for (const TaskModel& m : options_.models) {
      throwIfForwardInterrupted();  // before each task; the passes also stop between their blocks
      try {
        const auto sources = analyzeTaskBatch(*m.model, images, results, m.inputSize, boxes);
        for (std::size_t i = 0; i < batch.size(); ++i)
          if (!sources[i].empty()) processed[i].personBoxSource = sources[i];
      } catch (const ForwardInterrupted&) {
        throw;  // the job's stop, not this task's failure
      } catch (const std::exception& e) {
        for (FrameResult* r : results) r->taskErrors[m.model->task()] = e.what();
      }
    }
    if (std::all_of(results.begin(), results.end(),
                    [&](const FrameResult* r) { return r->taskErrors.size() >= options_.models.size(); }))
      throw std::runtime_error(results.front()->taskErrors.begin()->second);
    return processed;
  }

  void analyse() {
    setForwardInterruptFlag(interrupt_);  // this thread runs the job's forward passes
    try {
      while (!stop_) {
        std::vector<CapturedFrame> batch = nextBatch();
        if (batch.empty()) break;
        const auto t0 = Clock::now();
        std::vector<ProcessedFrame> processed = analyseBatch(batch);
        analyseBusy_ = analyseBusy_ + secondsSince(t0);
        for (std::size_t i = 0; i < batch.size(); ++i) {
          processed[i].frame = std::move(batch[i].frame);
          processed[i].latencyMs =
              std::chrono::duration<double, std::milli>(Clock::now() - batch[i].captured).count();
          if (!analysedFrames_.push(std::move(processed[i]))) return;
        }
      }
    } catch (const ForwardInterrupted&) {
      logger().info("frame pipeline: interrupted, the frames in flight are dropped");
      interrupted_ = true;
      stopAll();
    } catch (const std::exception& e) {
      failure_.set("analyse", e.what());
      stopAll();
    }
    analysedFrames_.close();
  }

  void countFrame(const ProcessedFrame& item, double& latencySum) {
    ++stats_.processed;
    latencySum += item.latencyMs;
    stats_.maxLatencyMs = std::max(stats_.maxLatencyMs, item.latencyMs);
    stats_.meanLatencyMs = latencySum / static_cast<double>(stats_.processed);
    stats_.decoded = decoded_;
    stats_.dropped = sourceGaps_ + latestFrame_.dropped();
    stats_.wallSeconds = secondsSince(started_);
  }

  void sink() {
    threads::lowerThisThreadPriority(helperNiceness_);
    std::optional<PersonTracker> tracker;
    if (options_.tracking) tracker.emplace(*options_.tracking);
    std::optional<TemporalSmoother> smoother;
    if (options_.smoothing) smoother.emplace(*options_.smoothing);
    double latencySum = 0;
    while (!stop_) {
      std::optional<ProcessedFrame> item = analysedFrames_.popFor(std::chrono::milliseconds(50));
      if (!item) {
        if (analysedFrames_.closed()) break;
        continue;
      }
      const auto t0 = Clock::now();
      try {
        if (tracker) {
          tracker->assign(item->result);
          stats_.tracks = tracker->tracksStarted();
        }
        if (smoother) smoother->apply(item->result, item->frame.timestampSeconds);
        item->latencyMs =
            std::chrono::duration<double, std::milli>(Clock::now() - t0).count() + item->latencyMs;
        if (callbacks_.sink) callbacks_.sink(*item);
      } catch (const std::exception& e) {
        failure_.set("sink", e.what());
        stopAll();
        break;
      }
      stats_.sinkBusySeconds += secondsSince(t0);
      countFrame(*item, latencySum);
      if (callbacks_.onProgress) callbacks_.onProgress(stats_);
    }
    sinkDone_ = true;
  }

  FrameSource& source_;
  const FramePipelineOptions& options_;
  const FramePipelineCallbacks& callbacks_;
  const bool live_;
  const std::size_t batchSize_;
  const int helperNiceness_;
  const std::atomic<bool>* const interrupt_;
  const Clock::time_point started_ = Clock::now();
  FramePipelineStats stats_;
  Failure failure_;
  std::atomic<bool> stop_{false}, sinkDone_{false}, interrupted_{false};
  std::atomic<std::int64_t> decoded_{0}, sourceGaps_{0};
  std::atomic<double> decodeBusy_{0}, analyseBusy_{0};
  BoundedQueue<CapturedFrame> decodedFrames_;
  LatestSlot<CapturedFrame> latestFrame_;
  BoundedQueue<ProcessedFrame> analysedFrames_;
};

}  // namespace

FramePipelineStats runFramePipeline(FrameSource& source, const FramePipelineOptions& options,
                                    const FramePipelineCallbacks& callbacks) {
  checkOptions(options);
  return PipelineRun(source, options, callbacks).run();
}

}  // namespace sapiens
