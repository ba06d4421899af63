#pragma once
// Gaps in a series: short ones filled by linear interpolation on the real timestamps, long ones left
// empty, the series split there into gap-free segments.

#include "sapiens/motion/motion_tables.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace sapiens::motion {

/// Rows first..last (inclusive) of a table.
struct RowSegment {
  std::size_t first = 0;
  std::size_t last = 0;
  std::size_t rows() const { return last - first + 1; }
};

/// The clip's usual step between the frame numbers of consecutive rows (the median; 1 when every frame
/// was analysed), by which omitted rows count as missing frames.
std::int64_t typicalFrameStep(const SampleTimes& times);

/// How many samples are missing between rows `before` and `after`: the rows between them, or the frames
/// between them in steps of `frameStep` when more (rows left out of the table).
std::size_t missingSamples(const SampleTimes& times, std::size_t before, std::size_t after,
                           std::int64_t frameStep);

/// Interpolates (linearly in time) every run of NaN inside `series` whose missing samples are at most
/// `maxGapFrames`; returns the gap-free segments, split at the longer gaps (which stay NaN). Leading and
/// trailing NaN belong to no segment.
std::vector<RowSegment> fillShortGaps(std::vector<double>& series, const SampleTimes& times, int maxGapFrames,
                                      std::int64_t frameStep);

}  // namespace sapiens::motion
