#pragma once
// SHA-256 of bytes and of files (OpenSSL's libcrypto): the hash the Hugging Face hub publishes for every
// LFS file, so a download can be checked against it and a file already present compared by hand.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace sapiens {

/// Lower-case hex SHA-256 of `bytes`.
std::string sha256Hex(std::string_view bytes);

/// Lower-case hex SHA-256 of the file's contents, read in 4 MiB pieces. `onProgress(bytesRead)` is
/// called after each piece; `isCancelled` is polled as often and ends the read with std::nullopt.
/// Throws std::runtime_error naming the file when it cannot be read.
std::optional<std::string> sha256OfFile(const std::string& path,
                                        const std::function<void(std::uint64_t)>& onProgress = {},
                                        const std::function<bool()>& isCancelled = {});

/// The 64 lower-case hex digits of a hub ETag ("abc...", W/"abc...") when it is a SHA-256, else "".
std::string sha256FromEtag(std::string_view etag);

}  // namespace sapiens
