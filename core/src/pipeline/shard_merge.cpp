#include "sapiens/pipeline/shard_merge.h"

#include "sapiens/io/atomic_file.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

namespace sapiens {
namespace fs = std::filesystem;
namespace {

// (K, N) of "results.shard-K-of-N.json"; nullopt for any other name.
std::optional<std::pair<std::size_t, std::size_t>> shardOfManifestName(const std::string& name) {
  std::size_t k = 0, n = 0;
  int used = 0;
  if (std::sscanf(name.c_str(), "results.shard-%zu-of-%zu.json%n", &k, &n, &used) != 2) return std::nullopt;
  if (static_cast<std::size_t>(used) != name.size() || k == 0 || n == 0 || k > n) return std::nullopt;
  return std::make_pair(k, n);
}

}  // namespace

MergedManifest mergeShardManifests(const std::string& outputDir) {
  std::map<std::size_t, nlohmann::json> shards;  // K -> manifest
  std::size_t count = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(outputDir, ec)) {
    const auto shard = shardOfManifestName(entry.path().filename().string());
    if (!shard) continue;
    const auto [k, n] = *shard;
    if (count != 0 && n != count)
      throw std::runtime_error(outputDir + " holds shards of runs split " + std::to_string(count) + " and " +
                               std::to_string(n) + " ways");
    count = n;
    std::ifstream in(entry.path());
    nlohmann::json manifest;
    try {
      in >> manifest;
    } catch (const std::exception& e) {
      throw std::runtime_error(entry.path().string() + ": not valid JSON: " + e.what());
    }
    if (!manifest.contains("inputs") || !manifest["inputs"].is_array())
      throw std::runtime_error(entry.path().string() + ": not a run manifest (no inputs list)");
    shards[k] = std::move(manifest);
  }
  if (ec) throw std::runtime_error("cannot read " + outputDir + ": " + ec.message());
  if (shards.empty()) throw std::runtime_error("no results.shard-K-of-N.json in " + outputDir);
  std::string missing;
  for (std::size_t k = 1; k <= count; ++k)
    if (!shards.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
  if (!missing.empty())
    throw std::runtime_error(outputDir + ": shard(s) " + missing + " of " + std::to_string(count) +
                             " missing");

  nlohmann::json merged = shards.begin()->second;
  merged.erase("shard");
  merged["inputs"] = nlohmann::json::array();
  std::size_t succeeded = 0, failed = 0;
  double elapsed = 0;
  for (auto& [k, manifest] : shards) {
    if (manifest.value("models", nlohmann::json()) != merged.value("models", nlohmann::json()))
      throw std::runtime_error(outputDir + ": shard " + std::to_string(k) + " ran other models than shard " +
                               std::to_string(shards.begin()->first));
    for (auto& input : manifest["inputs"]) merged["inputs"].push_back(input);
    succeeded += manifest.value("succeeded", std::size_t{0});
    failed += manifest.value("failed", std::size_t{0});
    elapsed += manifest.value("elapsed_s", 0.0);
    if (manifest.value("cancelled", false)) merged["cancelled"] = true;
  }
  merged["succeeded"] = succeeded;
  merged["failed"] = failed;
  merged["elapsed_s"] = elapsed;  // machine time over all shards
  merged["merged_shards"] = count;
  MergedManifest result;
  result.path = (fs::path(outputDir) / "results.json").string();
  writeFileAtomically(result.path, merged.dump(2) + "\n");
  result.shards = count;
  result.inputs = merged["inputs"].size();
  result.failed = failed;
  return result;
}

}  // namespace sapiens
