#pragma once
// One tracked person's motion as tables over the clip's real timestamps: what motion analysis produces and
// what the motion files (CSV, TRC, MOT, BVH) are written from. Plain data; NaN marks a missing value.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace sapiens::motion {

using Point3 = std::array<double, 3>;

/// The sampled instants of a clip, one per row of a table: presentation time in seconds (increasing,
/// not necessarily evenly spaced) and the video frame index it came from.
struct SampleTimes {
  std::vector<double> seconds;
  std::vector<std::int64_t> frames;
  std::size_t size() const { return seconds.size(); }
};

/// Throws std::invalid_argument naming `what` and the first offending row unless `times` has as many
/// frames as seconds, every time finite and each later than the one before.
void requireIncreasingTimes(const SampleTimes& times, const std::string& what);

/// Named 3-D points per row (metres); rows[r][m] is marker m at time r.
struct MarkerTable {
  SampleTimes times;
  std::vector<std::string> names;
  std::vector<std::vector<Point3>> rows;
};

/// Named scalar series per row (angles in degrees); rows[r][a] is series a at time r.
struct AngleTable {
  SampleTimes times;
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
};

}  // namespace sapiens::motion
