#pragma once
// One job's part of a run spread over many machines (`sapiens-cli run --shard K/N`): a contiguous part of
// the sorted pictures, or of the selected frames of one video. `sapiens-cli merge` joins the parts.

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace sapiens {

/// Part `index` (0-based) of `count` equal parts of a run.
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};

/// The items [first, second) of `total` that `shard` takes: contiguous, sizes differing by at most one,
/// the same on every machine. Throws std::invalid_argument for index >= count or count 0.
std::pair<std::size_t, std::size_t> shardRange(const Shard& shard, std::size_t total);

/// "results.json", or "results.shard-K-of-N.json" (K 1-based) for a shard; `sapiens-cli merge` joins those.
std::string manifestNameFor(const std::optional<Shard>& shard);

/// ".shard-K-of-N" (K 1-based), or "" without a shard: what a shard adds to the names of its outputs.
std::string shardSuffix(const std::optional<Shard>& shard);

}  // namespace sapiens
