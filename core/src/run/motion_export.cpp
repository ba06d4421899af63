#include "sapiens/run/motion_export.h"

#include "result/json_support.h"
#include "run/motion_summary_json.h"
#include "sapiens/common/log.h"
#include "sapiens/export/angle_plot.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"
#include "sapiens/motion/bvh_file.h"
#include "sapiens/motion/bvh_skeleton.h"
#include "sapiens/motion/complete_rows.h"
#include "sapiens/motion/mot_file.h"
#include "sapiens/motion/motion_csv.h"
#include "sapiens/motion/motion_error.h"
#include "sapiens/motion/trc_file.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/lifted_keypoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>

namespace sapiens {

using motion::MotionError;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

void requireFrameTimes(const KeypointPredictions& predictions) {
  if (predictions.frames.empty()) throw MotionError("the pose file has no frame");
  for (std::size_t f = 0; f < predictions.frames.size(); ++f) {
    const KeypointFrame& frame = predictions.frames[f];
    if (!frame.time)
      throw MotionError(fmt::format(
          "frame {} ('{}') has no time: motion needs the STEM.pose.json of a video run", f, frame.imageName));
    if (f > 0 && !(*frame.time > *predictions.frames[f - 1].time))
      throw MotionError(fmt::format("frame {} ('{}') at {} s is not later than the frame before ({} s)", f,
                                    frame.imageName, *frame.time, *predictions.frames[f - 1].time));
  }
}

std::int64_t frameNumber(const KeypointFrame& frame, std::size_t position) {
  const std::string& name = frame.imageName;
  const bool digits = !name.empty() && name.size() < 18 &&
                      std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
  return digits ? std::stoll(name) : static_cast<std::int64_t>(position);
}

// The person's 3-D keypoints that count: a score at or above the file's threshold and a value.
std::vector<motion::Point3> countedPoints(const PoseInstance& pose, float threshold, std::size_t keypoints) {
  std::vector<motion::Point3> points(keypoints, {kNan, kNan, kNan});
  for (std::size_t k = 0; k < std::min(keypoints, pose.keypoints3d.size()); ++k)
    if (liftedKeypointCounts(pose, k, threshold)) points[k] = pose.keypoints3d[k];
  return points;
}

struct TrackSpan {
  std::size_t first = 0, last = 0;
};

std::map<int, TrackSpan> trackSpans(const KeypointPredictions& predictions) {
  std::map<int, TrackSpan> spans;
  bool untracked = false, lifted = false;
  for (std::size_t f = 0; f < predictions.frames.size(); ++f) {
    for (const PoseInstance& pose : predictions.frames[f].instances) {
      if (pose.trackId < 0) {
        untracked = true;
        continue;
      }
      lifted |= !pose.keypoints3d.empty();
      auto [it, added] = spans.try_emplace(pose.trackId, TrackSpan{f, f});
      if (!added) it->second.last = f;
    }
  }
  if (spans.empty())
    throw MotionError(untracked ? "no person has a track_id: motion needs a video run's STEM.pose.json"
                                : "no person is in any frame of the pose file");
  if (!lifted)
    throw MotionError(
        "no person has keypoints_3d: run the video with --task pose,pointmap for 3-D keypoints");
  return spans;
}

}  // namespace

std::vector<motion::KeypointTrack> keypointTracks(const KeypointPredictions& predictions) {
  const std::size_t keypoints = keypoints308().size();
  if (predictions.numKeypoints != static_cast<int>(keypoints))
    throw MotionError(fmt::format("motion needs the {} Goliath keypoints; the pose file has {}", keypoints,
                                  predictions.numKeypoints));
  requireFrameTimes(predictions);
  std::vector<motion::KeypointTrack> tracks;
  for (const auto& [id, span] : trackSpans(predictions)) {
    motion::KeypointTrack track;
    track.trackId = id;
    for (std::size_t f = span.first; f <= span.last; ++f) {
      const KeypointFrame& frame = predictions.frames[f];
      track.times.seconds.push_back(*frame.time);
      track.times.frames.push_back(frameNumber(frame, f));
      std::vector<motion::Point3> points(keypoints, {kNan, kNan, kNan});
      for (const PoseInstance& pose : frame.instances)
        if (pose.trackId == id) points = countedPoints(pose, predictions.keypointThreshold, keypoints);
      track.points.push_back(std::move(points));
    }
    tracks.push_back(std::move(track));
  }
  return tracks;
}

namespace {

bool hasValue(const motion::Point3& point) {
  return std::isfinite(point[0]);
}

bool hasValue(double value) {
  return std::isfinite(value);
}

// The columns of `table` named in `names`, in that order, that have a value somewhere in the clip.
template <class Table>
Table columnsWithValues(const Table& table, const std::vector<std::string>& names) {
  Table out;
  out.times = table.times;
  out.rows.resize(table.rows.size());
  for (const std::string& name : names) {
    const auto it = std::find(table.names.begin(), table.names.end(), name);
    if (it == table.names.end()) continue;
    const auto c = static_cast<std::size_t>(it - table.names.begin());
    if (std::none_of(table.rows.begin(), table.rows.end(), [&](const auto& row) { return hasValue(row[c]); }))
      continue;
    out.names.push_back(name);
    for (std::size_t r = 0; r < table.rows.size(); ++r) out.rows[r].push_back(table.rows[r][c]);
  }
  return out;
}

// The body markers OpenSim's models place: the skeleton's joints and the heels.
std::vector<std::string> trcMarkerNames() {
  std::vector<std::string> names = motion::bvhMarkerNames();
  for (const char* heel : {"left_heel", "right_heel"})
    if (std::find(names.begin(), names.end(), heel) == names.end()) names.push_back(heel);
  return names;
}

// TRC and MOT hold only complete samples: written when at least two are left.
void writeOpenSimFiles(const motion::TrackMotion& m, const std::string& prefix, TrackMotionSummary& s) {
  const motion::MarkerTable markers =
      motion::keepCompleteRows(columnsWithValues(m.filteredMarkers, trcMarkerNames()));
  if (markers.rows.size() >= 2 && !markers.names.empty()) {
    motion::writeTrc(prefix + ".trc", markers);
    s.files["trc"] = prefix + ".trc";
  } else {
    s.warnings.push_back("no TRC: fewer than two samples have every body marker");
  }
  const motion::AngleTable angles =
      motion::keepCompleteRows(columnsWithValues(m.filteredAngles, m.filteredAngles.names));
  if (angles.rows.size() >= 2 && !angles.names.empty()) {
    motion::writeMot(prefix + ".mot", angles);
    s.files["mot"] = prefix + ".mot";
  } else {
    s.warnings.push_back("no MOT: fewer than two samples have every angle");
  }
}

void writeTrackFiles(const motion::TrackMotion& m, const std::string& prefix,
                     const MotionExportOptions& options, TrackMotionSummary& s) {
  motion::writeAngleCsv(prefix + ".angles.csv", m.filteredAngles);
  s.files["angles_csv"] = prefix + ".angles.csv";
  motion::writeMarkerCsv(prefix + ".keypoints3d.csv", m.filteredMarkers);
  s.files["keypoints3d_csv"] = prefix + ".keypoints3d.csv";
  writeOpenSimFiles(m, prefix, s);
  try {
    const motion::BvhMotion bvh = motion::buildBvhMotion(m.filteredMarkers);
    motion::writeBvh(prefix + ".bvh", bvh);
    s.files["bvh"] = prefix + ".bvh";
  } catch (const MotionError& e) {
    s.warnings.push_back(std::string("no BVH: ") + e.what());
  }
  if (options.plots) {
    writeAngleTrackPlot(prefix + ".angles.png", m.rawAngles, m.filteredAngles,
                        fmt::format("track {}: joint angles (degrees), raw grey, filtered {:.3g} Hz",
                                    m.trackId, options.cutoffHz));
    s.files["plot"] = prefix + ".angles.png";
  }
}

void summarise(const motion::TrackMotion& m, TrackMotionSummary& s) {
  const motion::SampleTimes& times = m.filteredAngles.times;
  s.samples = times.size();
  s.durationSeconds = times.size() > 1 ? times.seconds.back() - times.seconds.front() : 0.0;
  s.frameRateHz = m.frameRateHz;
  s.segments = m.segmentStatistics;
  s.warnings = m.warnings;
  for (std::size_t a = 0; a < m.filteredAngles.names.size(); ++a) {
    AngleRange range{m.filteredAngles.names[a], kNan, kNan};
    for (const auto& row : m.filteredAngles.rows) {
      if (!std::isfinite(row[a])) continue;
      range.minDegrees = std::isnan(range.minDegrees) ? row[a] : std::min(range.minDegrees, row[a]);
      range.maxDegrees = std::isnan(range.maxDegrees) ? row[a] : std::max(range.maxDegrees, row[a]);
    }
    s.angleRanges.push_back(range);
  }
}

}  // namespace

MotionExportSummary exportMotion(const KeypointPredictions& predictions, const std::string& stem,
                                 const MotionExportOptions& options) {
  motion::MotionSettings settings;
  settings.cutoffHz = options.cutoffHz;
  settings.maxGapFrames = options.maxGapFrames;
  settings.angles = options.angles;
  MotionExportSummary summary;
  std::string reasons;
  for (const motion::KeypointTrack& track : keypointTracks(predictions)) {
    TrackMotionSummary s;
    s.trackId = track.trackId;
    try {
      const motion::TrackMotion m = motion::analyseTrack(track, settings);
      summarise(m, s);
      writeTrackFiles(m, fmt::format("{}.track{}", stem, track.trackId), options, s);
    } catch (const MotionError& e) {
      s.error = e.what();
      reasons += fmt::format("{}track {}: {}", reasons.empty() ? "" : "; ", track.trackId, e.what());
      logger().warn("motion: track {} has no files: {}", track.trackId, e.what());
    }
    summary.tracks.push_back(std::move(s));
  }
  if (summary.tracksWithFiles() == 0) throw MotionError("no track could be analysed: " + reasons);
  return summary;
}

nlohmann::json detail::motionSummaryJson(const std::string& input, const MotionExportOptions& options,
                                         const MotionExportSummary& summary) {
  nlohmann::json tracks = nlohmann::json::array();
  for (const TrackMotionSummary& s : summary.tracks) {
    nlohmann::json track = {{"track_id", s.trackId}};
    if (!s.error.empty()) {
      track["error"] = s.error;
      tracks.push_back(std::move(track));
      continue;
    }
    const motion::SegmentStatistics& g = s.segments;
    track["samples"] = s.samples;
    track["duration_s"] = s.durationSeconds;
    track["frame_rate_hz"] = s.frameRateHz;
    track["segments"] = {
        {"count", g.count},          {"median_frames", g.medianFrames}, {"min_frames", g.minFrames},
        {"max_frames", g.maxFrames}, {"median_s", g.medianSeconds},     {"min_s", g.minSeconds},
        {"max_s", g.maxSeconds}};
    for (const AngleRange& r : s.angleRanges)
      track["angle_ranges_deg"][r.name] =
          std::isnan(r.minDegrees) ? nlohmann::json(nullptr) : nlohmann::json{r.minDegrees, r.maxDegrees};
    track["files"] = s.files;
    track["warnings"] = s.warnings;
    tracks.push_back(std::move(track));
  }
  return {{"input", input},
          {"options",
           {{"cutoff_hz", options.cutoffHz},
            {"max_gap_frames", options.maxGapFrames},
            {"angles", options.angles}}},
          {"tracks", std::move(tracks)},
          {"tracks_with_files", summary.tracksWithFiles()}};
}

void recordMotionInManifest(const std::string& path, const std::string& input,
                            const MotionExportOptions& options, const MotionExportSummary& summary) {
  nlohmann::json manifest = nlohmann::json::object();
  if (std::filesystem::exists(path)) manifest = json_support::parseFile(path);
  if (!manifest.is_object())
    throw ExportError(path, "is not a JSON object: the motion summary was not added");
  manifest["motion"] = detail::motionSummaryJson(input, options, summary);
  writeFileAtomically(path, manifest.dump(2) + "\n");
}

std::size_t MotionExportSummary::tracksWithFiles() const {
  return static_cast<std::size_t>(std::count_if(
      tracks.begin(), tracks.end(), [](const TrackMotionSummary& t) { return !t.files.empty(); }));
}

}  // namespace sapiens
