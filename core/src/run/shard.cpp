#include "sapiens/run/shard.h"

#include <stdexcept>

namespace sapiens {

std::pair<std::size_t, std::size_t> shardRange(const Shard& shard, std::size_t total) {
  if (shard.count == 0 || shard.index >= shard.count)
    throw std::invalid_argument("shard " + std::to_string(shard.index + 1) + " of " +
                                std::to_string(shard.count));
  return {total * shard.index / shard.count, total * (shard.index + 1) / shard.count};
}

std::string shardSuffix(const std::optional<Shard>& shard) {
  if (!shard) return "";
  return ".shard-" + std::to_string(shard->index + 1) + "-of-" + std::to_string(shard->count);
}

std::string manifestNameFor(const std::optional<Shard>& shard) {
  return "results" + shardSuffix(shard) + ".json";
}

}  // namespace sapiens
