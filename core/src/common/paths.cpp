#include "sapiens/common/paths.h"

#include "sapiens/common/build_info.h"

#include <pwd.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace sapiens::paths {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

std::string executableDir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

}  // namespace

std::string home() {
  if (auto h = env("HOME"); !h.empty()) return h;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "/tmp";
}

std::string checkpointRoot(const std::string& chosen) {
  if (auto root = env("SAPIENS_CHECKPOINT_ROOT"); !root.empty()) return root;
  if (!chosen.empty()) return chosen;
  return home() + "/sapiens2_host";
}

bool checkpointRootFromEnvironment() {
  return !env("SAPIENS_CHECKPOINT_ROOT").empty();
}

std::string resourceDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto hasData = [&](const fs::path& dir) { return fs::exists(dir / "data" / "seg29.json", ec); };
  if (auto dir = env("SAPIENS_RESOURCE_DIR"); !dir.empty()) return dir;
  // Installed layout: <prefix>/bin/sapiens-cli and <prefix>/share/sapiens2-studio.
  if (auto exe = executableDir(); !exe.empty()) {
    fs::path installed = fs::path(exe).parent_path() / "share" / "sapiens2-studio";
    if (hasData(installed)) return installed.string();
  }
  if (hasData(SAPIENS_INSTALL_DATADIR)) return SAPIENS_INSTALL_DATADIR;
  return SAPIENS_RESOURCE_DIR_BUILD;
}

std::string userDataDir() {
  std::string base = env("XDG_DATA_HOME");
  if (base.empty()) base = home() + "/.local/share";
  return base + "/sapiens2-studio";
}

}  // namespace sapiens::paths
