#pragma once
// Atomic file replacement: write to a temporary file beside the target, flush and fsync it, then
// rename it over the target. A crash or a full disk leaves either the old file or the new one.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace sapiens {

class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AtomicFile {
 public:
  /// Opens a temporary file next to `path`, its name ending with `tempSuffix` (for writers that choose
  /// the format by the extension). Throws IoError naming the path on failure.
  explicit AtomicFile(std::string path, std::string_view tempSuffix = {});
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~AtomicFile();

  /// Appends bytes. Throws IoError (with the reason, e.g. "No space left on device").
  void write(const void* data, std::size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// fsync + rename over the target (+ fsync of the folder). Throws IoError.
  void commit();

  const std::string& path() const { return path_; }
  /// The temporary file: a library that writes files by name (OpenCV's OpenEXR writer) may fill it
  /// instead of write(); commit() then puts it in place.
  const std::string& temporaryPath() const { return tempPath_; }

 private:
  std::string path_;
  std::string tempPath_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Convenience: atomically replace `path` with `contents`.
void writeFileAtomically(const std::string& path, std::string_view contents);

}  // namespace sapiens
