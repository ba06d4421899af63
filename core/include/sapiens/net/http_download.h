#pragma once
// Resumable HTTP(S) downloads of large files (checkpoints) with libcurl: progress, cancel, resume of an
// interrupted transfer with an HTTP Range request, size verification against what the server announced
// (and an expected size when known), a SHA-256 check against the hash the server announces (the Hugging
// Face hub's X-Linked-Etag of LFS files) or the caller expects, an optional content check, and atomic
// placement: the bytes go to
// DESTINATION.part beside the target and are renamed over it only when complete and verified.
// Proxies come from the environment as libcurl reads them (http_proxy, https_proxy, HTTPS_PROXY,
// ALL_PROXY, no_proxy). Built only with libcurl (SAPIENS_HAVE_CURL); without it downloadSupported() is
// false and downloadFile() throws DownloadError(Unsupported).

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace sapiens {

class DownloadError : public std::runtime_error {
 public:
  enum class Kind {
    Unsupported,   ///< built without libcurl
    Network,       ///< connection failed, timed out or was cut (the .part file is kept for a resume)
    Http,          ///< the server answered with an error status
    SizeMismatch,  ///< the bytes received disagree with the announced or expected size
    Invalid,       ///< the content check rejected the file
    HashMismatch,  ///< the file's SHA-256 is not the announced or expected one (nothing is kept)
    Cancelled,     ///< the caller cancelled (the .part file is kept for a resume)
    Io,            ///< the local file could not be written or placed
  };
  DownloadError(Kind kind, const std::string& message, long httpStatus = 0)
      : std::runtime_error(message), kind_(kind), httpStatus_(httpStatus) {}
  Kind kind() const { return kind_; }
  long httpStatus() const { return httpStatus_; }

 private:
  Kind kind_;
  long httpStatus_;
};

struct DownloadProgress {
  std::uint64_t received = 0;          ///< bytes in the .part file so far (a resumed part included)
  std::optional<std::uint64_t> total;  ///< the whole file's size, once the server has said it
  std::uint64_t resumedFrom = 0;       ///< bytes that were already there when this transfer started
  double bytesPerSecond = 0;           ///< of this transfer
  bool verifying = false;  ///< the transfer is done and `received` bytes of the file have been hashed
};

struct DownloadRequest {
  std::string url;
  std::string destination;                     ///< final path; DESTINATION.part while downloading
  std::optional<std::uint64_t> expectedBytes;  ///< when known: any other size is an error
  std::string expectedSha256;                  ///< hex; when set, any other hash is an error
  bool checkAnnouncedSha256 = true;            ///< check against the hub's X-Linked-Etag when it is a SHA-256
  /// Checks the complete .part file before it is placed (e.g. a safetensors header check); throws
  /// std::exception to reject it (the .part file is then removed).
  std::function<void(const std::string& partPath)> validate;
  std::function<void(const DownloadProgress&)> onProgress;
  std::function<bool()> isCancelled;
  bool resume = true;  ///< continue an existing .part file with a Range request
  long connectTimeoutSeconds = 30;
  long stallSeconds = 60;            ///< fail when less than 1 byte/s arrives for this long
  std::vector<std::string> headers;  ///< extra request headers, "Name: value"
};

struct DownloadResult {
  std::string path;
  std::uint64_t bytes = 0;
  std::uint64_t resumedFrom = 0;  ///< 0 when the transfer started from the beginning
  long httpStatus = 0;            ///< of the last response (200, or 206 after a resume)
  std::string sha256;             ///< the file's hash when one was checked, else ""
};

/// What a server says about a file before it is downloaded (a HEAD request, redirects followed).
struct RemoteFile {
  std::optional<std::uint64_t> bytes;  ///< X-Linked-Size, else the final Content-Length
  std::string sha256;                  ///< from X-Linked-Etag (or the ETag) when it is a SHA-256, else ""
  long httpStatus = 0;                 ///< of the final response
};

/// Whether this build can download (libcurl was found).
bool downloadSupported();
/// "libcurl/7.88.1 OpenSSL/3.0.x ..." or "" without libcurl.
std::string downloadBackendVersion();

/// Downloads request.url to request.destination as described above. Throws DownloadError naming the
/// URL and the destination. The destination is never left partially written: it is either the old
/// file (or absent) or the complete verified new one.
DownloadResult downloadFile(const DownloadRequest& request);

/// Asks the server for the file's size and hash without downloading it. Throws DownloadError (Network,
/// Http, Unsupported) naming the URL.
RemoteFile probeRemoteFile(const std::string& url, const std::vector<std::string>& headers = {},
                           long timeoutSeconds = 20, const std::function<bool()>& isCancelled = {});

/// The .part path that downloadFile uses for `destination`.
std::string partialPath(const std::string& destination);

}  // namespace sapiens
