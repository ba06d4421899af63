#include "sapiens/io/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace sapiens {

namespace {

std::string errnoText(int error) {
  return std::generic_category().message(error);
}

// What a file that is not a regular file is, for the message.
const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

[[noreturn]] void refuseOpen(const std::string& path, int error, std::string_view expected) {
  if (error == ENOENT) throw FileReadError(path, "no such file (expected " + std::string(expected) + ")");
  throw FileReadError(path, "cannot open for reading: " + errnoText(error));
}

[[noreturn]] void refuseSize(const std::string& path, std::uintmax_t bytes, std::uintmax_t maxBytes,
                             std::string_view expected) {
  throw FileReadError(path, "is " + std::to_string(bytes) + " bytes, more than the " +
                                std::to_string(maxBytes) + " bytes " + std::string(expected) + " may have");
}

void checkStatus(const std::string& path, const struct stat& status, std::uintmax_t maxBytes,
                 std::string_view expected) {
  if (!S_ISREG(status.st_mode))
    throw FileReadError(path, std::string("is ") + kindOf(status.st_mode) + ", not " + std::string(expected));
  if (static_cast<std::uintmax_t>(status.st_size) > maxBytes)
    refuseSize(path, static_cast<std::uintmax_t>(status.st_size), maxBytes, expected);
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::uintmax_t requireRegularFile(const std::string& path, std::uintmax_t maxBytes,
                                  std::string_view expected) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) refuseOpen(path, errno, expected);
  checkStatus(path, status, maxBytes, expected);
  return static_cast<std::uintmax_t>(status.st_size);
}

OpenedFile openRegularFile(const std::string& path, std::uintmax_t maxBytes, std::string_view expected) {
  OpenedFile file;
  file.size = requireRegularFile(path, maxBytes, expected);
  file.stream.open(path, std::ios::binary);
  if (!file.stream) refuseOpen(path, errno, expected);
  return file;
}

std::string readWholeFile(const std::string& path, std::uintmax_t maxBytes, std::string_view expected) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before fstat could refuse it.
  const FileDescriptor file(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) refuseOpen(path, errno, expected);
  struct stat status {};
  if (::fstat(file.get(), &status) != 0) throw FileReadError(path, "cannot be examined: " + errnoText(errno));
  checkStatus(path, status, maxBytes, expected);

  std::string bytes;
  bytes.reserve(static_cast<std::size_t>(status.st_size));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(file.get(), chunk, sizeof chunk);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw FileReadError(path, "cannot be read: " + errnoText(errno));
    }
    bytes.append(chunk, static_cast<std::size_t>(got));
    if (bytes.size() > maxBytes) refuseSize(path, bytes.size(), maxBytes, expected);
  }
  return bytes;
}

}  // namespace sapiens
