#include "media/file_placement.h"

#include "sapiens/media/media_error.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace sapiens::media_detail {
namespace {

namespace fs = std::filesystem;

void syncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string createTemporaryBeside(const std::string& path) {
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string pattern = (folder / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    throw MediaError(path, std::string("cannot create a file in its folder: ") + std::strerror(errno));
  ::close(fd);
  return pattern;
}

void placeFinishedFile(const std::string& temporary, const std::string& path) {
  syncPath(temporary, O_RDONLY);
  std::error_code ec;
  fs::rename(temporary, path, ec);
  if (ec) throw MediaError(path, "cannot rename the finished file into place: " + ec.message());
  const fs::path folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : fs::path(".");
  syncPath(folder.string(), O_RDONLY | O_DIRECTORY);
}

}  // namespace sapiens::media_detail
