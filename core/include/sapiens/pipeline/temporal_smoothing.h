#pragma once
// Optional smoothing of results across the frames of a video (off by default). Keypoints go through a
// One-Euro filter (Casiez et al. 2012: smooth when still, responsive when moving). Pointmaps, normals and
// albedo go through an edge-aware running average: a pixel is blended with its previous value only while
// the change stays below a threshold, so depth edges and moving people restart at once instead of
// leaving a trail. This is what removes the frame-to-frame flicker of pointmaps users report.

#include "sapiens/result/frame_result.h"

#include <map>
#include <vector>

namespace sapiens {

struct OneEuroParameters {
  double minCutoff = 1.0;  ///< Hz; lower = smoother when still
  double beta = 0.05;      ///< speed coefficient; higher = less lag when moving
  double derivativeCutoff = 1.0;
};

class OneEuroFilter {
 public:
  explicit OneEuroFilter(const OneEuroParameters& parameters = {}) : parameters_(parameters) {}
  /// The filtered value of `x` observed at `timestampSeconds` (strictly increasing between calls). A
  /// non-finite `x` (or time) is returned as it is and changes nothing.
  double filter(double x, double timestampSeconds);

 private:
  OneEuroParameters parameters_;
  bool started_ = false;
  double previous_ = 0, previousDerivative_ = 0, previousTime_ = 0;
};

struct SmoothingOptions {
  OneEuroParameters keypoints;
  double mapBlend = 0.3;            ///< weight of the new frame in the running average
  double depthChangeLimit = 0.05;   ///< relative depth change above which a pixel restarts
  double normalChangeDegrees = 15;  ///< angle above which a normal restarts
  double albedoChangeLimit = 0.08;  ///< per-channel change above which an albedo pixel restarts
  double alphaChangeLimit = 0.1;    ///< alpha (and foreground) change above which a matte pixel restarts
};

/// Keeps the state between consecutive frames of one stream. Frames must come in presentation order.
class TemporalSmoother {
 public:
  explicit TemporalSmoother(const SmoothingOptions& options = {}) : options_(options) {}
  /// Smooths `frame`'s keypoints, pointmap, normals, albedo and alpha matte in place against the previous
  /// frames.
  /// People with a track id (PersonTracker) keep their track's filters; others are matched to the previous
  /// frame's by the nearest box centre; a new person starts fresh.
  void apply(FrameResult& frame, double timestampSeconds);

 private:
  struct Track {
    int id = -1;     ///< the person's track id, -1 when untracked
    int missed = 0;  ///< frames since the tracked person was last seen
    float centerX = 0, centerY = 0;
    std::vector<OneEuroFilter> filters;  ///< x and y of every keypoint
  };
  void smoothPoses(FrameResult& frame, double timestampSeconds);
  void smoothMatte(FrameResult& frame);

  SmoothingOptions options_;
  std::vector<Track> tracks_;
  cv::Mat pointmap_, normal_, albedo_, alpha_, foreground_;
};

/// Mean absolute frame-to-frame change of a CV_32FC3 map over the pixels finite in both (the flicker
/// figure); 0 when none are.
double frameToFrameChange(const cv::Mat& previous, const cv::Mat& current);

}  // namespace sapiens
