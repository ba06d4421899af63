#pragma once
// Reading files, one way. Every reader of core (JSON manifests and keypoint files, npy arrays, box files,
// label pictures, the run's own results) takes its bytes through here, so that a folder, a FIFO, a socket
// or a device given where a file was expected, a file larger than its kind ever is, or a read that fails
// all come out as one FileReadError naming the file and what was expected, never as a stream or
// filesystem exception and never as a wait on a FIFO with no writer.

#include "sapiens/io/export_error.h"

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>

namespace sapiens {

class FileReadError : public ExportError {
 public:
  using ExportError::ExportError;

  /// The message without the path it starts with, for a reader that reports it under its own error type.
  std::string reason() const { return std::string(what()).substr(path().size() + 2); }
};

/// Upper bounds of the readers: far above any real file of the kind, far below what would exhaust memory.
inline constexpr std::uintmax_t kMaxJsonFileBytes = std::uintmax_t{1} << 30;
inline constexpr std::uintmax_t kMaxNpyFileBytes = std::uintmax_t{8} << 30;
inline constexpr std::uintmax_t kMaxPictureFileBytes = std::uintmax_t{4} << 30;

/// Checks, without opening it, that `path` is a regular file of at most `maxBytes` bytes; returns its
/// size. For readers that hand the path to a library (OpenCV, FFmpeg). `expected` completes the message,
/// e.g. "a JSON file": "PATH: is a folder, not a JSON file". Throws FileReadError.
std::uintmax_t requireRegularFile(const std::string& path, std::uintmax_t maxBytes,
                                  std::string_view expected);

/// A regular file of at most `maxBytes` bytes, checked as requireRegularFile does, opened as a binary
/// stream for readers that walk a header (the pictures' size check) and hand the rest to a library.
struct OpenedFile {
  std::ifstream stream;
  std::uintmax_t size = 0;
};
OpenedFile openRegularFile(const std::string& path, std::uintmax_t maxBytes, std::string_view expected);

/// The whole content of `path`, a regular file of at most `maxBytes` bytes. The file is opened without
/// waiting (a FIFO is refused, not waited on) and checked as opened; files that report no size (under
/// /proc) are read up to the bound. Throws FileReadError naming the path.
std::string readWholeFile(const std::string& path, std::uintmax_t maxBytes, std::string_view expected);

}  // namespace sapiens
