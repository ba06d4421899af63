#pragma once
// The Goliath-308 keypoint names that index a KeypointTrack's columns.

#include <string>
#include <vector>

namespace sapiens::motion {

/// The "names" list of a keypoints308.json file. Throws FileReadError (unreadable file) or MotionError
/// naming the file and the key.
std::vector<std::string> loadKeypointNames(const std::string& path);

/// paths::resourceDir() + "/data/keypoints308.json"'s names, read on first use (thread-safe).
const std::vector<std::string>& goliathKeypointNames();

/// Index of `name` in goliathKeypointNames(); throws MotionError when there is none.
int goliathKeypointIndex(const std::string& name);

}  // namespace sapiens::motion
