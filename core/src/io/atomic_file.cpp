#include "sapiens/io/atomic_file.h"

#include "sapiens/common/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <system_error>

namespace sapiens {

namespace {

std::string errnoText(int error) {
  return std::generic_category().message(error);
}

std::string folderOf(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string randomSuffix() {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(generator()));
  return text;
}

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string_view tempSuffix) : path_(std::move(path)) {
  const auto slash = path_.find_last_of('/');
  const std::string name = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") {
    throw IoError("cannot write '" + path_ + "': not a file name");
  }
  const std::string folder = folderOf(path_);

  struct stat existing {};
  const bool exists = ::stat(path_.c_str(), &existing) == 0;
  if (exists && S_ISDIR(existing.st_mode)) throw IoError("cannot write '" + path_ + "': it is a directory");

  constexpr int kAttempts = 16;
  for (int attempt = 0; attempt < kAttempts && fd_ < 0; ++attempt) {
    tempPath_ = (folder == "/" ? "" : folder) + "/." + name + ".tmp-" + std::to_string(::getpid()) + "-" +
                randomSuffix() + std::string(tempSuffix);
    fd_ = ::open(tempPath_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0644);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int error = errno;
    throw IoError("cannot create a temporary file in '" + folder + "' to write '" + path_ +
                  "': " + errnoText(error));
  }
  // The replacement keeps the permission bits of the file it replaces (the umask is not applied again).
  if (exists && ::fchmod(fd_, existing.st_mode & 07777) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    ::unlink(tempPath_.c_str());
    throw IoError("cannot set the permissions of '" + tempPath_ + "': " + errnoText(error));
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tempPath_.c_str());
}

void AtomicFile::write(const void* data, std::size_t size) {
  if (fd_ < 0) throw IoError("cannot write '" + path_ + "': the file is already committed or failed");
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd_, bytes, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      throw IoError("cannot write '" + path_ + "' (temporary file '" + tempPath_ + "'): " + errnoText(error));
    }
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) throw IoError("cannot commit '" + path_ + "': the file is already committed or failed");
  auto failure = [this](const char* step) {
    const int error = errno;
    return IoError("cannot " + std::string(step) + " '" + tempPath_ + "' to replace '" + path_ +
                   "': " + errnoText(error));
  };
  if (::fsync(fd_) != 0) throw failure("flush");
  const int fd = fd_;
  fd_ = -1;
  // close() can report a delayed write error (NFS, quota); the descriptor is released either way.
  if (::close(fd) != 0) throw failure("close");
  if (::rename(tempPath_.c_str(), path_.c_str()) != 0) throw failure("rename");
  committed_ = true;

  // Make the rename itself durable. The new contents are in place already, so a failure here is
  // reported but not thrown: the caller's data did reach the target.
  const std::string folder = folderOf(path_);
  const int folderFd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folderFd < 0 || ::fsync(folderFd) != 0) {
    const int error = errno;
    if (error != EINVAL) {
      logger().warn("wrote '{}' but could not sync its folder '{}': {}", path_, folder, errnoText(error));
    }
  }
  if (folderFd >= 0) ::close(folderFd);
}

void writeFileAtomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

}  // namespace sapiens
