#pragma once
// Versions of this program and of the libraries it was built with or runs on.

#include <string>
#include <utility>
#include <vector>

namespace sapiens {

/// "0.1.0 (Release)".
std::string versionString();

/// (component, version) pairs for the model library: app, LibTorch, compiler, ... Front ends add theirs.
std::vector<std::pair<std::string, std::string>> componentVersions();

}  // namespace sapiens
