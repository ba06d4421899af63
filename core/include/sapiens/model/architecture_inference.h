#pragma once
// Recovers an Architecture from a checkpoint's tensor names and shapes alone, so that any Sapiens2 file
// (released sizes, custom sizes, the tiny test models) loads without configuration.

#include "sapiens/model/architecture.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sapiens {

using TensorShapes = std::map<std::string, std::vector<std::int64_t>>;

/// Throws ModelFormatError (naming `source` and the key it needed) when the tensors are not a Sapiens2
/// state dict at all or a dimension cannot be determined. Inconsistencies between tensors are left to
/// the strict layout check (see checkLayout) so that they are reported all together.
Architecture inferArchitecture(const TensorShapes& shapes, const std::string& source);

struct LayoutProblems {
  std::vector<std::string> missing;
  std::vector<std::string> unexpected;
  std::vector<std::string> shapeMismatches;  ///< "name: file [a, b], expected [c, d]"

  bool empty() const { return missing.empty() && unexpected.empty() && shapeMismatches.empty(); }
  /// "2 missing: a, b; 1 unexpected: c; 1 shape mismatch: ..." (one line).
  std::string summary() const;
};

/// Compares the file's tensors with expectedParameters(arch).
LayoutProblems checkLayout(const TensorShapes& shapes, const Architecture& arch);

}  // namespace sapiens
