#pragma once
// The pose flip test: the model also sees the horizontally mirrored crop, and its heatmaps, mirrored
// back with left and right keypoints swapped, are averaged with the plain ones.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace sapiens {

/// "flip_indices" of a keypoint description file (resources/data/keypoints308.json): for every
/// keypoint, its mirror-image counterpart. Throws std::runtime_error naming the file when it is
/// missing, unreadable, or the list is not a permutation.
std::vector<std::int64_t> readFlipIndices(const std::string& keypointsJsonPath);

/// The official 308-keypoint permutation from the bundled resources (read once).
const std::vector<std::int64_t>& defaultFlipIndices();

/// (heatmaps + flip_W(flipped)[:, flipIndices]) / 2 for (B, K, h, w) heatmaps, on their device.
/// Throws std::invalid_argument when shapes differ or flipIndices does not have K entries in [0, K).
at::Tensor averageFlipTest(const at::Tensor& heatmaps, const at::Tensor& flippedHeatmaps,
                           const std::vector<std::int64_t>& flipIndices);

}  // namespace sapiens
