#pragma once
// Joining the manifests of a run spread over machines (`sapiens-cli run --shard K/N`, all writing into
// one shared output folder) into the results.json a single run would have written.

#include <cstddef>
#include <string>

namespace sapiens {

struct MergedManifest {
  std::string path;  ///< the results.json written
  std::size_t shards = 0;
  std::size_t inputs = 0;
  std::size_t failed = 0;
};

/// Reads every results.shard-K-of-N.json in `outputDir`, checks that they form one complete run (the same
/// N, each K once, the same models) and writes `outputDir`/results.json with their inputs in shard order.
/// Throws std::runtime_error naming what is missing or inconsistent (nothing is written then).
MergedManifest mergeShardManifests(const std::string& outputDir);

}  // namespace sapiens
