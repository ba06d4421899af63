#pragma once
// Shared by the libFuzzer targets that need files: a scratch folder per process (in /dev/shm when it is
// writable, so inputs never touch a disk), removed at exit, and writing bytes into a file there. A
// failure of the scratch folder itself is no finding of the code under test: it aborts with a message.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace sapiens::fuzz {

[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: %s\n", what.c_str());
  std::abort();
}

namespace detail {
inline std::string& scratchRoot() {
  static std::string root;
  return root;
}
inline void removeScratch() {
  std::error_code ec;
  if (!scratchRoot().empty()) std::filesystem::remove_all(scratchRoot(), ec);
}
}  // namespace detail

/// /dev/shm/sapiens-fuzz-TARGET-PID (or under /tmp), created on the first call.
inline const std::string& scratchDir(const char* target) {
  std::string& root = detail::scratchRoot();
  if (root.empty()) {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    root = std::string(base) + "/sapiens-fuzz-" + target + "-" + std::to_string(getpid());
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
    std::filesystem::create_directories(root, ec);
    if (ec) die("cannot create " + root + ": " + ec.message());
    std::atexit(detail::removeScratch);
  }
  return root;
}

inline void writeFile(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) die("cannot write " + path);
  if (size > 0 && std::fwrite(data, 1, size, file) != size) die("cannot write " + path);
  if (std::fclose(file) != 0) die("cannot write " + path);
}

inline void writeFile(const std::string& path, const std::string& text) {
  writeFile(path, reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
}

/// Aborts with `what` when `condition` is false: an input that breaks a documented promise.
inline void check(bool condition, const std::string& what) {
  if (!condition) die("broken promise: " + what);
}

}  // namespace sapiens::fuzz
