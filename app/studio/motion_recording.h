#pragma once
// The poses of the open video kept for motion analysis: per frame shown with results, its presentation
// time and its people (track ids, keypoints and 3-D keypoints as the tracker left them). Frames are held
// as shared, immutable snapshots so that the Motion dock's analysis reads them off the GUI thread without
// a copy of the clip.

#include "sapiens/export/keypoints_json.h"
#include "sapiens/motion/track_motion.h"
#include "sapiens/result/frame_result.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sapiens::studio {

/// The recorded frames in frame order, as handed to the background analysis.
using RecordedFrames = std::vector<std::shared_ptr<const KeypointFrame>>;

class MotionRecording {
 public:
  /// Forgets every frame (another video opened, or it closed).
  void clear();
  /// Frame `index` is on display at `seconds` (its decoded timestamp); its poses may follow.
  void noteFrameTime(std::int64_t index, double seconds);
  /// The poses of frame `index` (replacing what it had); a frame without poses or without a noted time
  /// is not kept.
  void record(std::int64_t index, const std::vector<PoseInstance>& poses);
  std::optional<double> timeOf(std::int64_t index) const;
  std::size_t frameCount() const { return frames_.size(); }
  RecordedFrames frames() const;

 private:
  std::map<std::int64_t, double> times_;
  std::map<std::int64_t, std::shared_ptr<const KeypointFrame>> frames_;
};

/// The recorded frames as a video's pose predictions: in time order, each named by its 6-digit frame
/// number, 308 keypoints, 3-D keypoints counted from `keypointThreshold` up.
KeypointPredictions motionPredictions(const RecordedFrames& frames, float keypointThreshold);

/// Every track of a recording, analysed: the tracks seen (in id order), each one's motion or why it
/// has none.
struct RecordingMotion {
  std::vector<int> trackIds;
  std::map<int, motion::TrackMotion> motions;
  std::map<int, std::string> errors;
};

/// Analyses each track of `frames` with the default settings (slow: run it off the GUI thread). Throws
/// motion::MotionError when nothing can be analysed: no frame, no person with 3-D keypoints (the video
/// ran without Pointmap), no tracked person, or every track refused (each one's reason).
RecordingMotion analyseRecording(const RecordedFrames& frames, float keypointThreshold);

}  // namespace sapiens::studio
