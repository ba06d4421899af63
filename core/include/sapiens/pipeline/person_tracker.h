#pragma once
// People keep one identity across the frames of a video. Each track predicts where its person will be
// (a constant-velocity Kalman filter on the box centre and size); each frame, tracks and people are
// paired by one optimal assignment (Hungarian) on how well the predicted box overlaps (IoU) and the
// keypoints agree (OKS); a track survives a few frames without its person (occlusion, a missed
// detection) and ends after more. A person no track takes gets a new id, never one used before.

#include "sapiens/result/frame_result.h"

#include <memory>
#include <vector>

namespace sapiens {

struct TrackingOptions {
  int maxMissedFrames = 10;             ///< a track ends after this many frames without its person
  double minimumSimilarity = 0.1;       ///< below this a track and a person are not paired at all
  double keypointWeight = 0.5;          ///< share of OKS in the similarity (the rest: box IoU)
  double keypointScoreThreshold = 0.3;  ///< keypoints below it count for neither side of OKS
};

class PersonTracker {
 public:
  explicit PersonTracker(const TrackingOptions& options = {});
  ~PersonTracker();
  PersonTracker(PersonTracker&&) noexcept;
  PersonTracker& operator=(PersonTracker&&) noexcept;

  /// Sets `trackId` of every pose of `frame`, the frames coming in presentation order.
  void assign(FrameResult& frame);
  /// The same for one frame's people.
  void assign(std::vector<PoseInstance>& people);
  /// Tracks started so far (the next new id).
  int tracksStarted() const;
  /// People left untracked (trackId -1) because their box was not finite: a model whose output
  /// overflowed. They never reach a track's filter, whose predictions would stay NaN from then on.
  int peopleNotTracked() const;
  /// Tracks alive now (seen within maxMissedFrames).
  int tracksAlive() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Pairs each of `expected` with one of `seen` (its index, or -1) by one optimal assignment on box IoU
/// and OKS, leaving out pairs less similar than options.minimumSimilarity.
std::vector<int> pairPeople(const std::vector<PoseInstance>& expected, const std::vector<PoseInstance>& seen,
                            const TrackingOptions& options);

/// Tracks the people of consecutive frames from scratch, as one PersonTracker over them would: how `merge`
/// joins the shards of a video, each tracked on its own, into the tracks of one run. Returns the tracks
/// started.
int trackPeople(const std::vector<std::vector<PoseInstance>*>& frames, const TrackingOptions& options = {});

/// Box overlap, intersection over union (0 when either is empty).
double boxIou(const BoundingBox& a, const BoundingBox& b);
/// Object keypoint similarity of two 308-keypoint poses at the scale of `reference`'s box, over the
/// keypoints scored at least `scoreThreshold` in both; 0 when none are.
double keypointSimilarity(const PoseInstance& reference, const PoseInstance& other, double scoreThreshold);

}  // namespace sapiens
