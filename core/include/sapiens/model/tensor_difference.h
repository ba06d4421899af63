#pragma once
// How far a tensor is from a reference, measured the way the golden fixtures specify their tolerances:
// max|got - ref| and mean|got - ref|, both divided by max|ref|.

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <string_view>

namespace sapiens {

struct TensorDifference {
  double maxRelative = 0.0;
  double meanRelative = 0.0;
  double referenceMax = 0.0;
  bool shapesMatch = true;
};

/// Computed in float64 on the CPU. Shapes must match (shapesMatch = false otherwise, errors = inf).
TensorDifference tensorDifference(const at::Tensor& got, const at::Tensor& reference);

struct ParityTolerance {
  double maxRelative = 0.0;  ///< 0 = exact
  double meanRelative = 0.0;
};

/// The fixtures' acceptance bounds for a named forward output (README "Numeric drift"); nullopt for a
/// name they do not cover. rope_* are exact; patch_embed_out / block0_in 1e-5 / 1e-6; block0_out
/// 1e-4 / 1e-5; everything later 2e-3 / 2e-4.
std::optional<ParityTolerance> parityTolerance(std::string_view outputName);

bool withinTolerance(const TensorDifference& difference, const ParityTolerance& tolerance);

}  // namespace sapiens
