#pragma once
// The exact tensor names and shapes of a Sapiens2 state dict for an architecture, as the official code
// saves it: bare backbone keys for the backbone alone, `backbone.` + `decode_head.` for task models.
// Nothing is allocated: this is what strict loading and the parameter-count tables check against.

#include "sapiens/model/architecture.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sapiens {

struct ParameterSpec {
  std::string name;
  std::vector<std::int64_t> shape;

  std::int64_t numel() const;
};

/// "" for Task::Backbone, "backbone." otherwise.
std::string backbonePrefix(Task task);
inline constexpr const char* kHeadPrefix = "decode_head.";
/// The name of the RoPE periods buffer (the only non-learned tensor).
std::string ropePeriodsName(Task task);

/// In the order the official state_dict lists them.
std::vector<ParameterSpec> expectedParameters(const Architecture& arch);
/// Sum of numel over expectedParameters (includes the periods buffer, as the files do).
std::int64_t parameterCount(const Architecture& arch);

}  // namespace sapiens
