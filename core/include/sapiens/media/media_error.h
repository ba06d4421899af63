#pragma once
// The one exception type of media/: a file or stream that cannot be read or written as media.
// The message always names the file.

#include <stdexcept>
#include <string>

namespace sapiens {

class MediaError : public std::runtime_error {
 public:
  MediaError(const std::string& path, const std::string& reason)
      : std::runtime_error(path + ": " + reason), path_(path) {}

  /// The file (or folder, or stream URL) the error is about.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace sapiens
