#pragma once
// Frames from any FrameSource through the task models, as three stages on their own threads joined by
// bounded hand-overs: decode -> analyse (pre-processing, forward pass, post-processing of every task
// model, `batchSize` frames per forward pass) -> sink (tracking, smoothing, then the caller's sink, in frame
// order). Decode and sink run below the analyser's priority; the caller's thread only polls the cancel.
// Files: back-pressure, every selected frame is processed, in order. Live sources: the newest frame wins; the
// frames skipped are dropped and counted, and latency is measured from capture to sink. Cancel at any time; a
// failure in one stage stops the others and is reported with the stage's name. A source that fails part-way
// (a truncated video) ends the stream: the frames decoded before it still reach the sink, and the error is
// reported.

#include "sapiens/media/frame_source.h"
#include "sapiens/pipeline/input_size.h"
#include "sapiens/pipeline/person_tracker.h"
#include "sapiens/pipeline/temporal_smoothing.h"
#include "sapiens/result/frame_result.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sapiens {

class Model;

struct TaskModel {
  const Model* model = nullptr;
  InputSize inputSize;
};

/// Which frames of a file to process: [first, end) every `every`-th, at most `maxFrames`.
struct FrameSelection {
  std::int64_t first = 0;
  std::int64_t end = -1;  ///< exclusive; -1 = to the end
  std::int64_t every = 1;
  std::int64_t maxFrames = -1;  ///< -1 = no limit
};

struct FramePipelineOptions {
  std::vector<TaskModel> models;         ///< run in this order (seg before pose: its mask gives the boxes)
  std::vector<BoundingBox> personBoxes;  ///< for every frame the next map does not list
  /// The user's boxes per frame (source index); an empty list says nobody is there (see person_box_file.h).
  std::map<std::int64_t, std::vector<BoundingBox>> personBoxesByFrame;
  FrameSelection selection;
  std::size_t batchSize = 1;                ///< frames per forward pass (files only; live sources use 1)
  std::size_t queueCapacity = 4;            ///< frames waiting between two stages
  std::optional<TrackingOptions> tracking;  ///< people get a track id (before smoothing, which uses it)
  std::optional<SmoothingOptions> smoothing;
  /// The job's interrupt (a window closing): once set, the forward pass under way stops between backbone
  /// blocks (the flag is installed on the analyser thread for the run), no further task or batch starts,
  /// and the run ends as cancelled, not failed. nullptr: the calling thread's flag (forward_interrupt.h),
  /// so a job that installed one on its thread stops its pipeline's passes too. Must outlive the run.
  const std::atomic<bool>* interrupt = nullptr;
};

struct ProcessedFrame {
  Frame frame;
  FrameResult result;
  std::string personBoxSource;
  double latencyMs = 0;  ///< from the moment the frame left the source to the sink
};

struct FramePipelineStats {
  std::int64_t decoded = 0;    ///< frames taken from the source (after selection)
  std::int64_t processed = 0;  ///< frames handed to the sink
  std::int64_t dropped = 0;    ///< live sources: frames skipped by the source or the pipeline
  double wallSeconds = 0;
  double decodeBusySeconds = 0;  ///< time each stage spent working (not waiting)
  double analyseBusySeconds = 0;
  double sinkBusySeconds = 0;
  double meanLatencyMs = 0;
  double maxLatencyMs = 0;
  int tracks = 0;  ///< people tracks started (with tracking)
  bool cancelled = false;
  std::string failedStage;  ///< "decode", "analyse" or "sink" when a stage failed
  std::string error;        ///< its message

  double framesPerSecond() const { return wallSeconds > 0 ? processed / wallSeconds : 0.0; }
};

struct FramePipelineCallbacks {
  /// Called on the sink stage's thread, in frame order. May throw to stop.
  std::function<void(ProcessedFrame&)> sink;
  /// Called after each processed frame, on the same thread.
  std::function<void(const FramePipelineStats&)> onProgress;
  /// Polled on the caller's thread every 20 ms; true stops the run soon (frames in flight are dropped).
  /// The options' interrupt stops it the same way, without waiting for the forward pass under way.
  std::function<bool()> isCancelled;
};

/// Runs the stream to its end, a cancel or a failure; never throws for those (see the stats).
/// Throws std::invalid_argument for options that cannot work (no model, bad selection).
FramePipelineStats runFramePipeline(FrameSource& source, const FramePipelineOptions& options,
                                    const FramePipelineCallbacks& callbacks);

}  // namespace sapiens
