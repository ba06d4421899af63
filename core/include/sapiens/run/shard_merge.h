#pragma once
// Joining the manifests of a run spread over machines (`sapiens-cli run --shard K/N`, all writing into
// one shared output folder) into the results.json a single run would have written.

#include <cstddef>
#include <cstdint>
#include <string>

namespace sapiens {

struct MergedManifest {
  std::string path;  ///< the results.json written
  std::size_t shards = 0;
  std::size_t inputs = 0;
  std::size_t failed = 0;
  std::int64_t frames = -1;    ///< a video's frames processed over all shards; -1 for pictures
  std::string annotatedVideo;  ///< a video's joined annotated video; "" when none
  std::string keypointsJson;   ///< a video's joined keypoints; "" when none
};

/// Reads every results.shard-K-of-N.json in `outputDir`, checks that they form one complete run (the same
/// N, each K once, the same models) and writes `outputDir`/results.json with their inputs in shard order.
/// For the shards of one video (frame ranges) it also joins their annotated videos (packets copied) and
/// keypoints JSON into the files a single run names, and checks that the ranges follow one another.
/// Throws std::runtime_error naming what is missing or inconsistent (results.json is not written then).
MergedManifest mergeShardManifests(const std::string& outputDir);

}  // namespace sapiens
