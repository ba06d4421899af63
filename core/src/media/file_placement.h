#pragma once
// Writing a media file so that it appears only when complete: a hidden temporary file beside the target
// (a rename never crosses file systems), fsync, rename. Private to media/.

#include <string>

namespace sapiens::media_detail {

/// A unique empty file beside `path`. Throws MediaError naming `path`.
std::string createTemporaryBeside(const std::string& path);

/// fsync of the finished temporary file, rename over `path`, fsync of the folder. Throws MediaError.
void placeFinishedFile(const std::string& temporary, const std::string& path);

}  // namespace sapiens::media_detail
