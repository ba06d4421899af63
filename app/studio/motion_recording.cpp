#include "motion_recording.h"

#include "sapiens/motion/motion_error.h"
#include "sapiens/run/motion_export.h"

#include <fmt/format.h>

#include <algorithm>

namespace sapiens::studio {

void MotionRecording::clear() {
  times_.clear();
  frames_.clear();
}

void MotionRecording::noteFrameTime(std::int64_t index, double seconds) {
  times_[index] = seconds;
}

void MotionRecording::record(std::int64_t index, const std::vector<PoseInstance>& poses) {
  const auto time = times_.find(index);
  if (poses.empty() || time == times_.end()) {
    frames_.erase(index);
    return;
  }
  auto frame = std::make_shared<KeypointFrame>();
  frame->imageName = fmt::format("{:06d}", index);
  frame->instances = poses;
  frame->time = time->second;
  frames_[index] = std::move(frame);
}

std::optional<double> MotionRecording::timeOf(std::int64_t index) const {
  const auto time = times_.find(index);
  return time == times_.end() ? std::nullopt : std::optional(time->second);
}

RecordedFrames MotionRecording::frames() const {
  RecordedFrames out;
  out.reserve(frames_.size());
  for (const auto& [index, frame] : frames_) out.push_back(frame);
  return out;
}

KeypointPredictions motionPredictions(const RecordedFrames& frames, float keypointThreshold) {
  KeypointPredictions predictions;
  predictions.keypointThreshold = keypointThreshold;
  predictions.frames.reserve(frames.size());
  for (const auto& frame : frames) predictions.frames.push_back(*frame);
  std::stable_sort(predictions.frames.begin(), predictions.frames.end(),
                   [](const KeypointFrame& a, const KeypointFrame& b) { return *a.time < *b.time; });
  return predictions;
}

RecordingMotion analyseRecording(const RecordedFrames& frames, float keypointThreshold) {
  if (frames.empty())
    throw motion::MotionError("No frame with people yet: play or step through the video with Pose checked");
  const KeypointPredictions predictions = motionPredictions(frames, keypointThreshold);
  const bool lifted =
      std::any_of(predictions.frames.begin(), predictions.frames.end(), [](const auto& frame) {
        return std::any_of(frame.instances.begin(), frame.instances.end(),
                           [](const PoseInstance& pose) { return !pose.keypoints3d.empty(); });
      });
  if (!lifted)
    throw motion::MotionError(
        "No 3-D keypoints: run the video with Pose and Pointmap checked (the pointmap lifts the keypoints)");
  RecordingMotion out;
  std::string reasons;
  for (const motion::KeypointTrack& track : keypointTracks(predictions)) {
    out.trackIds.push_back(track.trackId);
    try {
      out.motions.emplace(track.trackId, motion::analyseTrack(track, motion::MotionSettings{}));
    } catch (const motion::MotionError& e) {
      out.errors.emplace(track.trackId, e.what());
      reasons += fmt::format("{}person #{}: {}", reasons.empty() ? "" : "; ", track.trackId, e.what());
    }
  }
  if (out.motions.empty()) throw motion::MotionError("No person could be analysed: " + reasons);
  return out;
}

}  // namespace sapiens::studio
