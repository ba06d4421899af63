#include "sapiens/motion/track_motion.h"

#include "motion/vector3.h"
#include "sapiens/motion/derived_points.h"
#include "sapiens/motion/joint_angles.h"
#include "sapiens/motion/keypoint_names.h"
#include "sapiens/motion/motion_error.h"
#include "sapiens/motion/series_filter.h"
#include "sapiens/motion/zero_phase_filter.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace sapiens::motion {

namespace {

std::string trackName(const KeypointTrack& track) {
  return "track " + std::to_string(track.trackId);
}

void requireAnalysable(const KeypointTrack& track, const MotionSettings& settings, const FilterPlan& plan) {
  const std::string name = trackName(track);
  const std::size_t keypoints = goliathKeypointNames().size();
  for (std::size_t r = 0; r < track.points.size(); ++r)
    if (track.points[r].size() != keypoints)
      throw MotionError(name + ": row " + std::to_string(r) + " has " +
                        std::to_string(track.points[r].size()) + " keypoints, expected " +
                        std::to_string(keypoints));
  const std::size_t needed = filtfiltMinimumLength(plan.lowPass);
  if (track.points.size() < needed)
    throw MotionError(name + " has " + std::to_string(track.points.size()) + " samples; the order-" +
                      std::to_string(settings.order) + " zero-phase Butterworth filter needs at least " +
                      std::to_string(needed));
  for (const auto& row : track.points)
    if (std::any_of(row.begin(), row.end(), [](const Point3& p) { return vec::finite(p); })) return;
  throw MotionError(name + ": no keypoint has a 3-D position in any of its " +
                    std::to_string(track.points.size()) + " samples");
}

FilterPlan planFor(const KeypointTrack& track, const MotionSettings& settings) {
  const std::string name = trackName(track);
  if (track.times.size() < 2)
    throw MotionError(name + " has " + std::to_string(track.times.size()) +
                      " sample(s): motion analysis needs a clip, not a single frame");
  if (track.points.size() != track.times.size())
    throw MotionError(name + ": " + std::to_string(track.points.size()) + " rows of keypoints for " +
                      std::to_string(track.times.size()) + " times");
  try {
    requireIncreasingTimes(track.times, name);
  } catch (const std::invalid_argument& e) {
    throw MotionError(e.what());
  }
  if (settings.maxGapFrames < 0) throw MotionError("the longest gap to fill cannot be negative");
  if (settings.hampel.halfWindow < 1 || !(settings.hampel.nSigmas > 0.0))
    throw MotionError("the Hampel window must be at least 1 row either side and its threshold above 0");
  try {
    return planFilter(track.times, settings.cutoffHz, settings.order, settings.maxGapFrames, settings.hampel);
  } catch (const MotionError& e) {
    throw MotionError(name + ": " + e.what());
  }
}

MarkerTable rawMarkerTable(const KeypointTrack& track) {
  const auto& names = goliathKeypointNames();
  MarkerTable table;
  table.times = track.times;
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < names.size(); ++k)
    if (std::any_of(track.points.begin(), track.points.end(),
                    [&](const auto& row) { return vec::finite(row[k]); })) {
      kept.push_back(k);
      table.names.push_back(names[k]);
    }
  for (const auto& derivedName : derivedPointNames()) table.names.push_back(derivedName);
  for (const auto& row : track.points) {
    std::vector<Point3> out;
    for (std::size_t k : kept) out.push_back(row[k]);
    for (const Point3& p : derivePoints(row)) out.push_back(p);
    table.rows.push_back(std::move(out));
  }
  return table;
}

// Counts of what filtering did, summed over the series, for the warnings.
struct FilterTally {
  std::size_t outliers = 0;
  std::size_t unfilteredSegments = 0;
  std::size_t unfilteredSeries = 0;
};

void tally(FilterTally& t, const FilteredSeries& s) {
  t.outliers += s.outliers;
  t.unfilteredSegments += s.unfilteredSegments;
  t.unfilteredSeries += s.unfilteredSegments > 0 ? 1 : 0;
}

MarkerTable filterMarkers(const MarkerTable& raw, const FilterPlan& plan, FilterTally& t) {
  MarkerTable out = raw;
  std::vector<double> series(raw.rows.size());
  for (std::size_t m = 0; m < raw.names.size(); ++m)
    for (std::size_t axis = 0; axis < 3; ++axis) {
      for (std::size_t r = 0; r < raw.rows.size(); ++r) series[r] = raw.rows[r][m][axis];
      const FilteredSeries filtered = filterSeries(series, raw.times, plan);
      tally(t, filtered);
      for (std::size_t r = 0; r < raw.rows.size(); ++r) out.rows[r][m][axis] = filtered.values[r];
    }
  return out;
}

AngleTable filterAngles(const AngleTable& raw, const FilterPlan& plan, FilterTally& t,
                        std::vector<std::string>& warnings) {
  AngleTable out = raw;
  std::vector<double> series(raw.rows.size());
  for (std::size_t a = 0; a < raw.names.size(); ++a) {
    for (std::size_t r = 0; r < raw.rows.size(); ++r) series[r] = raw.rows[r][a];
    if (std::none_of(series.begin(), series.end(), [](double v) { return std::isfinite(v); }))
      warnings.push_back(raw.names[a] + ": no value in any sample (a point it needs is never seen)");
    const FilteredSeries filtered = filterSeries(series, raw.times, plan);
    tally(t, filtered);
    for (std::size_t r = 0; r < raw.rows.size(); ++r) out.rows[r][a] = filtered.values[r];
  }
  return out;
}

std::vector<RowSegment> presenceSegments(const KeypointTrack& track, const FilterPlan& plan) {
  std::vector<double> present(track.points.size(), NAN);
  for (std::size_t r = 0; r < track.points.size(); ++r)
    if (std::any_of(track.points[r].begin(), track.points[r].end(),
                    [](const Point3& p) { return vec::finite(p); }))
      present[r] = 1.0;
  return fillShortGaps(present, track.times, plan.maxGapFrames, plan.frameStep);
}

void addWarnings(TrackMotion& motion, const FilterTally& t, const FilterPlan& plan, int maxGapFrames) {
  std::ostringstream text;
  if (motion.segments.size() > 1) {
    text << "track " << motion.trackId << " is split into " << motion.segments.size()
         << " segments at gaps longer than " << maxGapFrames << " frames";
    motion.warnings.push_back(text.str());
  }
  if (t.outliers > 0)
    motion.warnings.push_back(std::to_string(t.outliers) +
                              " outlier value(s) replaced by their window's median (Hampel)");
  if (t.unfilteredSegments > 0)
    motion.warnings.push_back(std::to_string(t.unfilteredSegments) + " segment(s) in " +
                              std::to_string(t.unfilteredSeries) + " series shorter than the filter's " +
                              std::to_string(filtfiltMinimumLength(plan.lowPass)) +
                              " samples are left empty in the filtered tables");
}

double medianOf(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace

SegmentStatistics segmentStatistics(const std::vector<RowSegment>& segments, const SampleTimes& times) {
  SegmentStatistics s;
  s.count = segments.size();
  if (segments.empty()) return s;
  std::vector<double> frames;
  std::vector<double> seconds;
  for (const RowSegment& segment : segments) {
    frames.push_back(double(segment.rows()));
    seconds.push_back(times.seconds[segment.last] - times.seconds[segment.first]);
  }
  s.medianFrames = medianOf(frames);
  s.minFrames = static_cast<std::size_t>(*std::min_element(frames.begin(), frames.end()));
  s.maxFrames = static_cast<std::size_t>(*std::max_element(frames.begin(), frames.end()));
  s.medianSeconds = medianOf(seconds);
  s.minSeconds = *std::min_element(seconds.begin(), seconds.end());
  s.maxSeconds = *std::max_element(seconds.begin(), seconds.end());
  return s;
}

TrackMotion analyseTrack(const KeypointTrack& track, const MotionSettings& settings) {
  const FilterPlan plan = planFor(track, settings);
  requireAnalysable(track, settings, plan);
  const std::vector<AngleDefinition> angles = selectAngles(jointAngleTable(), settings.angles);

  TrackMotion motion;
  motion.trackId = track.trackId;
  motion.frameRateHz = 1.0 / plan.intervalSeconds;
  motion.rawMarkers = rawMarkerTable(track);
  motion.rawAngles = computeAngles(motion.rawMarkers, angles, settings.worldUp);
  FilterTally t;
  motion.filteredMarkers = filterMarkers(motion.rawMarkers, plan, t);
  motion.filteredAngles = filterAngles(motion.rawAngles, plan, t, motion.warnings);
  motion.segments = presenceSegments(track, plan);
  motion.segmentStatistics = segmentStatistics(motion.segments, track.times);
  addWarnings(motion, t, plan, settings.maxGapFrames);
  return motion;
}

}  // namespace sapiens::motion
