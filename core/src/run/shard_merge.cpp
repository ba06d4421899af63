#include "sapiens/run/shard_merge.h"

#include "sapiens/export/keypoints_json.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/file_read.h"
#include "sapiens/media/video_concat.h"
#include "sapiens/pipeline/person_tracker.h"
#include "sapiens/run/shard.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

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

std::string withoutShardSuffix(const std::string& path, std::size_t k, std::size_t n) {
  const std::string suffix = shardSuffix(Shard{k - 1, n});
  const fs::path p(path);
  std::string name = p.filename().string();
  const std::size_t at = name.find(suffix);
  if (at == std::string::npos)
    throw std::runtime_error(path + ": not named as shard " + std::to_string(k) + "'s output");
  name.erase(at, suffix.size());
  return (p.parent_path() / name).string();
}

// The shards of one video: consecutive frame ranges of the same input, run with the same models.
MergedManifest mergeVideoShards(const std::string& outputDir,
                                const std::map<std::size_t, nlohmann::json>& shards) {
  const std::size_t count = shards.size();
  nlohmann::json merged = shards.begin()->second;
  const std::string input = merged.value("input", "");
  std::vector<std::string> videos, keypointFiles;
  std::string videoPath, keypointsPath;
  std::int64_t nextFrame = -1;
  std::int64_t decoded = 0, processed = 0, dropped = 0;
  double latencyTotal = 0, maxLatency = 0;
  for (const auto& [k, manifest] : shards) {
    const std::string name = "shard " + std::to_string(k);
    if (manifest.value("input", "") != input)
      throw std::runtime_error(outputDir + ": " + name + " ran on " +
                               manifest.value("input", std::string("?")) + ", shard " +
                               std::to_string(shards.begin()->first) + " on " + input);
    if (manifest.value("cancelled", false) || manifest.contains("error"))
      throw std::runtime_error(outputDir + ": " + name +
                               " did not finish (cancelled or failed); run it again");
    const nlohmann::json shard = manifest.value("shard", nlohmann::json::object());
    const std::int64_t first = shard.value("first_frame", std::int64_t{-1});
    const std::int64_t end = shard.value("end_frame", std::int64_t{-1});
    if (nextFrame >= 0 && first != nextFrame)
      throw std::runtime_error(outputDir + ": " + name + " starts at frame " + std::to_string(first) +
                               " but the shard before it ends at frame " + std::to_string(nextFrame));
    nextFrame = end;
    const nlohmann::json frames = manifest.value("frames", nlohmann::json::object());
    decoded += frames.value("decoded", std::int64_t{0});
    const std::int64_t shardProcessed = frames.value("processed", std::int64_t{0});
    processed += shardProcessed;
    dropped += frames.value("dropped", std::int64_t{0});
    latencyTotal += frames.value("mean_latency_ms", 0.0) * static_cast<double>(shardProcessed);
    maxLatency = std::max(maxLatency, frames.value("max_latency_ms", 0.0));
    const nlohmann::json outputs = manifest.value("outputs", nlohmann::json::object());
    if (const std::string video = outputs.value("annotated_video", ""); !video.empty()) {
      videos.push_back(video);
      videoPath = withoutShardSuffix(video, k, count);
    }
    if (const std::string keypoints = outputs.value("keypoints", ""); !keypoints.empty()) {
      keypointFiles.push_back(keypoints);
      keypointsPath = withoutShardSuffix(keypoints, k, count);
    }
  }

  MergedManifest result;
  int tracks = 0;
  if (!keypointFiles.empty()) {
    KeypointPredictions joined = readKeypointsJson(keypointFiles.front());
    for (std::size_t i = 1; i < keypointFiles.size(); ++i) {
      KeypointPredictions part = readKeypointsJson(keypointFiles[i]);
      for (auto& frame : part.frames) joined.frames.push_back(std::move(frame));
    }
    // Each shard tracked its people on its own, from id 0 and without the frames before it: tracking the
    // joined frames again gives one run's tracks, through people occluded at a boundary too.
    std::vector<std::vector<PoseInstance>*> people;
    for (auto& frame : joined.frames) people.push_back(&frame.instances);
    tracks = trackPeople(people);
    writeKeypointsJson(keypointsPath, joined);
    result.keypointsJson = keypointsPath;
  }
  if (!videos.empty()) {
    concatenateVideos(videos, videoPath);
    result.annotatedVideo = videoPath;
  }

  merged.erase("shard");
  merged["frames"] = {
      {"decoded", decoded},
      {"processed", processed},
      {"dropped", dropped},
      {"mean_latency_ms", processed > 0 ? latencyTotal / static_cast<double>(processed) : 0.0},
      {"max_latency_ms", maxLatency}};
  merged["outputs"]["annotated_video"] = result.annotatedVideo;
  merged["outputs"]["keypoints"] = result.keypointsJson;
  if (merged.contains("tracks")) merged["tracks"] = tracks;
  merged["merged_shards"] = count;
  result.path = (fs::path(outputDir) / "results.json").string();
  writeFileAtomically(result.path, merged.dump(2) + "\n");
  result.shards = count;
  result.inputs = 1;
  result.frames = processed;
  return result;
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
    const std::string text = readWholeFile(entry.path().string(), kMaxJsonFileBytes, "a run manifest (JSON)");
    nlohmann::json manifest;
    try {
      manifest = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(entry.path().string() + ": not valid JSON: " + e.what());
    }
    const bool pictures = manifest.contains("inputs") && manifest["inputs"].is_array();
    const bool video = manifest.contains("input") && manifest["input"].is_string() &&
                       manifest.contains("shard") && manifest["shard"].is_object();
    if (!pictures && !video)
      throw std::runtime_error(entry.path().string() +
                               ": not a run manifest (no inputs list or video input)");
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

  const nlohmann::json& firstModels = shards.begin()->second.value("models", nlohmann::json());
  for (const auto& [k, manifest] : shards) {
    if (manifest.value("models", nlohmann::json()) != firstModels)
      throw std::runtime_error(outputDir + ": shard " + std::to_string(k) + " ran other models than shard " +
                               std::to_string(shards.begin()->first));
  }
  if (shards.begin()->second.contains("input")) return mergeVideoShards(outputDir, shards);

  nlohmann::json merged = shards.begin()->second;
  merged.erase("shard");
  merged["inputs"] = nlohmann::json::array();
  std::size_t succeeded = 0, failed = 0, partial = 0;
  double elapsed = 0;
  for (auto& [k, manifest] : shards) {
    for (auto& input : manifest["inputs"]) merged["inputs"].push_back(input);
    succeeded += manifest.value("succeeded", std::size_t{0});
    failed += manifest.value("failed", std::size_t{0});
    partial += manifest.value("partial", std::size_t{0});
    elapsed += manifest.value("elapsed_s", 0.0);
    if (manifest.value("cancelled", false)) merged["cancelled"] = true;
  }
  merged["succeeded"] = succeeded;
  merged["failed"] = failed;
  merged["partial"] = partial;
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
