#pragma once
// Joins videos that VideoWriter wrote for consecutive frame ranges of one input (the shards of a long
// video) into one file by copying their packets: no re-encoding, every frame keeps its timestamp.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sapiens {

/// Writes `parts`, in order, into `output` (which appears only when complete) and returns the frames
/// written. Throws MediaError naming the part that cannot be read, holds no video, differs from the first
/// (codec, size, time base), or whose first frame is not later than the previous part's last.
std::int64_t concatenateVideos(const std::vector<std::string>& parts, const std::string& output);

}  // namespace sapiens
