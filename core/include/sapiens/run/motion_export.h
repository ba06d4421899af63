#pragma once
// Motion per tracked person from a video's poses (STEM.pose.json with each frame's time, track ids and
// keypoints_3d): the analysis of sapiens/motion/track_motion.h and one set of files per track,
//   STEM.trackN.angles.csv, .keypoints3d.csv   every sample (empty fields where a value is missing)
//   STEM.trackN.trc, .mot                       OpenSim: the samples where every column has a value
//   STEM.trackN.bvh                             the skeleton, one frame per sample
//   STEM.trackN.angles.png                      the angles over time, raw and filtered
// all from the filtered series, 3-D in metres with Y up. A track that cannot be analysed (too short to
// filter, no 3-D point) gets no file and says why.

#include "sapiens/export/keypoints_json.h"
#include "sapiens/motion/track_motion.h"

#include <map>
#include <string>
#include <vector>

namespace sapiens {

struct MotionExportOptions {
  double cutoffHz = 6.0;
  int maxGapFrames = 10;
  std::vector<std::string> angles;  ///< names in joint_angles.json; empty: all
  bool plots = true;                ///< STEM.trackN.angles.png
};

struct AngleRange {
  std::string name;
  double minDegrees = 0, maxDegrees = 0;  ///< of the filtered series; NaN when it has no value
};

struct TrackMotionSummary {
  int trackId = -1;
  std::size_t samples = 0;
  double durationSeconds = 0;
  double frameRateHz = 0;
  motion::SegmentStatistics segments;
  std::vector<AngleRange> angleRanges;
  std::map<std::string, std::string> files;  ///< "angles_csv", "keypoints3d_csv", "trc", "mot", "bvh", "plot"
  std::vector<std::string> warnings;
  std::string error;  ///< why the track has no files; empty when it has them
};

struct MotionExportSummary {
  std::vector<TrackMotionSummary> tracks;
  std::size_t tracksWithFiles() const;
};

/// Each tracked person's keypoints_3d over the frames from their first to their last (NaN where they are
/// absent). Throws motion::MotionError when a frame has no time, the times do not increase, or no person
/// has a track id or a 3-D keypoint (naming what to run instead).
std::vector<motion::KeypointTrack> keypointTracks(const KeypointPredictions& predictions);

/// Analyses every track and writes its files next to `stem` (STEM.trackN.*). Throws motion::MotionError
/// when no track could be analysed, with each track's reason (a cutoff at or above the clip's Nyquist
/// frequency fails them all); a file that cannot be written throws its ExportError / IoError.
MotionExportSummary exportMotion(const KeypointPredictions& predictions, const std::string& stem,
                                 const MotionExportOptions& options);

/// Puts the motion summary (the input, the options and each track's) into the manifest at `path` as its
/// "motion" member: a run's results.json keeps everything else; a missing file is created.
void recordMotionInManifest(const std::string& path, const std::string& input,
                            const MotionExportOptions& options, const MotionExportSummary& summary);

}  // namespace sapiens
