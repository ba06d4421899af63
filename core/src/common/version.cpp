#include "sapiens/common/version.h"

#include "sapiens/common/build_info.h"

#include <spdlog/version.h>
#include <torch/version.h>

#include <nlohmann/json.hpp>

namespace sapiens {

std::string versionString() {
  return std::string(SAPIENS_VERSION_STRING) + " (" + SAPIENS_BUILD_TYPE + ")";
}

std::vector<std::pair<std::string, std::string>> componentVersions() {
  auto v3 = [](int a, int b, int c) {
    return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c);
  };
  std::vector<std::pair<std::string, std::string>> versions = {
      {"Sapiens2 Studio", versionString()},
      {"LibTorch", TORCH_VERSION},
      {"spdlog", v3(SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH)},
      {"nlohmann_json",
       v3(NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
      {"Compiler", __VERSION__},
  };
  if (*SAPIENS_QT_VERSION) versions.emplace_back("Qt (built with)", SAPIENS_QT_VERSION);
  if (*SAPIENS_VTK_VERSION) versions.emplace_back("VTK (built with)", SAPIENS_VTK_VERSION);
  return versions;
}

}  // namespace sapiens
