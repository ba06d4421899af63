#include "sapiens/net/sha256.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace sapiens {
namespace {

struct DigestDeleter {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using Digest = std::unique_ptr<EVP_MD_CTX, DigestDeleter>;

Digest startDigest() {
  Digest digest(EVP_MD_CTX_new());
  if (!digest || EVP_DigestInit_ex(digest.get(), EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256: OpenSSL could not start a digest");
  return digest;
}

std::string finishDigest(EVP_MD_CTX* digest) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> value{};
  unsigned int size = 0;
  if (EVP_DigestFinal_ex(digest, value.data(), &size) != 1)
    throw std::runtime_error("SHA-256: OpenSSL could not finish the digest");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) {
    hex += kHex[value[i] >> 4];
    hex += kHex[value[i] & 15];
  }
  return hex;
}

struct FileCloser {
  int fd;
  ~FileCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string sha256Hex(std::string_view bytes) {
  Digest digest = startDigest();
  EVP_DigestUpdate(digest.get(), bytes.data(), bytes.size());
  return finishDigest(digest.get());
}

std::optional<std::string> sha256OfFile(const std::string& path,
                                        const std::function<void(std::uint64_t)>& onProgress,
                                        const std::function<bool()>& isCancelled) {
  const FileCloser file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  auto fail = [&](int error) {
    return std::runtime_error("cannot read " + path +
                              " for its SHA-256: " + std::generic_category().message(error));
  };
  if (file.fd < 0) throw fail(errno);
  Digest digest = startDigest();
  std::vector<char> buffer(std::size_t{4} << 20);
  std::uint64_t done = 0;
  for (;;) {
    if (isCancelled && isCancelled()) return std::nullopt;
    const ssize_t n = ::read(file.fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail(errno);
    if (n == 0) break;
    EVP_DigestUpdate(digest.get(), buffer.data(), static_cast<std::size_t>(n));
    done += static_cast<std::uint64_t>(n);
    if (onProgress) onProgress(done);
  }
  return finishDigest(digest.get());
}

std::string sha256FromEtag(std::string_view etag) {
  if (etag.substr(0, 2) == "W/") etag.remove_prefix(2);
  while (!etag.empty() && (etag.front() == '"' || etag.front() == ' ')) etag.remove_prefix(1);
  while (!etag.empty() && (etag.back() == '"' || etag.back() == ' ')) etag.remove_suffix(1);
  if (etag.size() != 64) return "";
  std::string hex;
  for (const char c : etag) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return hex;
}

}  // namespace sapiens
