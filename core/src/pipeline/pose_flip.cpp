#include "pipeline/pose_flip.h"

#include "sapiens/common/paths.h"
#include "sapiens/io/file_read.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

namespace sapiens {

std::vector<std::int64_t> readFlipIndices(const std::string& path) {
  const std::string text = readWholeFile(path, kMaxJsonFileBytes, "a keypoint description (JSON)");
  std::vector<std::int64_t> indices;
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    indices = json.at("flip_indices").get<std::vector<std::int64_t>>();
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(fmt::format("{}: no usable \"flip_indices\" list: {}", path, error.what()));
  }
  std::vector<bool> seen(indices.size(), false);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::int64_t target = indices[i];
    if (target < 0 || target >= static_cast<std::int64_t>(indices.size()) ||
        seen[static_cast<std::size_t>(target)]) {
      throw std::runtime_error(
          fmt::format("{}: \"flip_indices\" is not a permutation of 0..{} (entry {} = {})", path,
                      indices.size() - 1, i, target));
    }
    seen[static_cast<std::size_t>(target)] = true;
  }
  if (indices.empty()) throw std::runtime_error(fmt::format("{}: \"flip_indices\" is empty", path));
  return indices;
}

const std::vector<std::int64_t>& defaultFlipIndices() {
  static const std::vector<std::int64_t> indices =
      readFlipIndices(paths::resourceDir() + "/data/keypoints308.json");
  return indices;
}

at::Tensor averageFlipTest(const at::Tensor& heatmaps, const at::Tensor& flippedHeatmaps,
                           const std::vector<std::int64_t>& flipIndices) {
  if (heatmaps.dim() != 4 || heatmaps.sizes() != flippedHeatmaps.sizes()) {
    throw std::invalid_argument(
        fmt::format("averageFlipTest: expected two (B, K, h, w) heatmaps of one shape, got "
                    "({}) and ({})",
                    fmt::join(heatmaps.sizes(), ", "), fmt::join(flippedHeatmaps.sizes(), ", ")));
  }
  const std::int64_t keypoints = heatmaps.size(1);
  if (static_cast<std::int64_t>(flipIndices.size()) != keypoints) {
    throw std::invalid_argument(fmt::format("averageFlipTest: {} flip indices for {} keypoint heatmaps",
                                            flipIndices.size(), keypoints));
  }
  for (const std::int64_t index : flipIndices) {
    if (index < 0 || index >= keypoints) {
      throw std::invalid_argument(
          fmt::format("averageFlipTest: flip index {} outside 0..{}", index, keypoints - 1));
    }
  }
  const at::Tensor permutation =
      at::tensor(flipIndices, at::TensorOptions().dtype(at::kLong)).to(heatmaps.device());
  const at::Tensor mirrored = flippedHeatmaps.flip({3}).index_select(1, permutation);
  return (heatmaps + mirrored) / 2;
}

}  // namespace sapiens
