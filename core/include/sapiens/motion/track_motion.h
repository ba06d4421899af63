#pragma once
// Motion analysis of one tracked person: from 3-D keypoints over a clip to cleaned marker trajectories
// and joint angles, raw and filtered, with the gap-free segments as a quality figure.
//
// Markers: the Goliath-308 keypoints with at least one finite value in the clip, in keypoint order, then
// the derived points pelvis, thorax, spine, head (derived_points.h). Raw angles are computed from the raw
// markers and unwrapped; filtered markers and angles are each series (every coordinate, every angle)
// filtered on its own by filterSeries (series_filter.h: Hampel, gaps up to maxGapFrames filled, Butterworth
// per gap-free segment). The track's segments are those of its presence (a row with any finite keypoint),
// split where it is absent for more than maxGapFrames.

#include "sapiens/motion/gap_fill.h"
#include "sapiens/motion/hampel.h"
#include "sapiens/motion/motion_tables.h"

#include <string>
#include <vector>

namespace sapiens::motion {

/// One tracked person's keypoints over a clip: rows x K Goliath-308 keypoints in metres in the pointmap's
/// camera frame (x right, y down, z forward); NaN where a keypoint is absent.
struct KeypointTrack {
  int trackId = 0;
  SampleTimes times;
  std::vector<std::vector<Point3>> points;
};

struct MotionSettings {
  double cutoffHz = 6.0;
  int order = 4;
  int maxGapFrames = 10;
  HampelSettings hampel;
  std::vector<std::string> angles;  // names in joint_angles.json; empty: all of them
  Point3 worldUp{0.0, -1.0, 0.0};   // the camera's up for a level camera (y points down)
};

/// Lengths of the gap-free segments: how long the track stays whole.
struct SegmentStatistics {
  std::size_t count = 0;
  double medianFrames = 0.0;
  std::size_t minFrames = 0;
  std::size_t maxFrames = 0;
  double medianSeconds = 0.0;  // from a segment's first sample to its last
  double minSeconds = 0.0;
  double maxSeconds = 0.0;
};

struct TrackMotion {
  int trackId = 0;
  double frameRateHz = 0.0;  // 1 / the median frame interval: the filter's sample rate
  MarkerTable rawMarkers;
  MarkerTable filteredMarkers;
  AngleTable rawAngles;
  AngleTable filteredAngles;
  std::vector<RowSegment> segments;
  SegmentStatistics segmentStatistics;
  std::vector<std::string> warnings;
};

/// Throws MotionError with a message naming the track for input it cannot analyse: fewer than two
/// rows, fewer rows than the filter needs, rows of the wrong length, times not increasing, no finite
/// keypoint anywhere, a cutoff not below the Nyquist frequency of the clip's frame rate, an unknown angle.
TrackMotion analyseTrack(const KeypointTrack& track, const MotionSettings& settings);

/// The statistics of `segments` of a clip sampled at `times`.
SegmentStatistics segmentStatistics(const std::vector<RowSegment>& segments, const SampleTimes& times);

}  // namespace sapiens::motion
