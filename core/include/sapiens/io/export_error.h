#pragma once
// The exception of export/ and of the JSON files core reads: a result that cannot be written, or a
// file that cannot be read back, as the requested format. The message always names the file. Failures of
// the write itself (missing or read-only folder, full disk) arrive as the IoError that AtomicFile throws,
// which also names the file; catching IoError catches both.

#include "sapiens/io/atomic_file.h"

#include <string>

namespace sapiens {

class ExportError : public IoError {
 public:
  ExportError(const std::string& path, const std::string& reason)
      : IoError(path + ": " + reason), path_(path) {}

  /// The file the error is about.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace sapiens
