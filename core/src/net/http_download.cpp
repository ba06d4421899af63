#include "sapiens/net/http_download.h"

#include "sapiens/common/log.h"
#include "sapiens/common/version.h"
#include "sapiens/net/sha256.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#ifdef SAPIENS_HAVE_CURL
#include <curl/curl.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#endif

namespace sapiens {

std::string partialPath(const std::string& destination) {
  return destination + ".part";
}

#ifndef SAPIENS_HAVE_CURL

bool downloadSupported() {
  return false;
}

std::string downloadBackendVersion() {
  return "";
}

DownloadResult downloadFile(const DownloadRequest& request) {
  throw DownloadError(DownloadError::Kind::Unsupported,
                      "cannot download " + request.url +
                          ": this build has no libcurl (install libcurl4-openssl-dev and rebuild)");
}

RemoteFile probeRemoteFile(const std::string& url, const std::vector<std::string>&, long,
                           const std::function<bool()>&) {
  throw DownloadError(DownloadError::Kind::Unsupported,
                      "cannot ask " + url + " for its size: this build has no libcurl");
}

#else

namespace {

namespace fs = std::filesystem;
using Kind = DownloadError::Kind;

std::string errnoText(int error) {
  return std::generic_category().message(error);
}

void initCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool startsWithNoCase(const std::string& text, const char* prefix) {
  const std::size_t n = std::strlen(prefix);
  if (text.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::string trim(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::size_t start = 0;
  while (start < text.size() && std::isspace(static_cast<unsigned char>(text[start]))) ++start;
  return text.substr(start);
}

std::optional<std::uint64_t> parseNumber(const std::string& text) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), ::isdigit) || text.size() > 19)
    return std::nullopt;
  return std::stoull(text);
}

std::string humanBytes(std::uint64_t bytes) {
  if (bytes < 1000) return fmt::format("{} B", bytes);
  if (bytes < 1000 * 1000) return fmt::format("{:.1f} kB", bytes / 1e3);
  if (bytes < 1000ull * 1000 * 1000) return fmt::format("{:.1f} MB", bytes / 1e6);
  return fmt::format("{:.2f} GB", bytes / 1e9);
}

// What the last response of a transfer said (redirects reset it).
struct Response {
  long status = 0;
  std::optional<std::uint64_t> contentLength;
  std::optional<std::uint64_t> rangeStart;  ///< Content-Range: bytes START-END/TOTAL
  std::optional<std::uint64_t> rangeTotal;  ///< also from "bytes */TOTAL" (416)
  std::string etagSha256;                   ///< the ETag when it is a SHA-256
};

struct Transfer {
  const DownloadRequest* request = nullptr;
  std::string part;
  std::uint64_t offset = 0;  ///< bytes of the .part file this transfer continues from
  Response response;
  std::string announcedSha256;                       ///< X-Linked-Etag of any response in the redirect chain
  std::optional<std::uint64_t> announcedLinkedSize;  ///< X-Linked-Size, likewise
  int fd = -1;
  bool bodyStarted = false;
  std::uint64_t written = 0;  ///< body bytes of this transfer written to the file
  std::string errorBody;      ///< the start of an error response's body, for the message
  std::string abortReason;    ///< why the write callback stopped the transfer
  Kind abortKind = Kind::Io;
  bool cancelled = false;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point lastProgress{};

  ~Transfer() {
    if (fd >= 0) ::close(fd);
  }

  std::optional<std::uint64_t> total() const {
    if (response.status == 206 && response.rangeTotal) return response.rangeTotal;
    if (response.status == 200 && response.contentLength) return response.contentLength;
    return std::nullopt;
  }
  std::uint64_t base() const { return response.status == 206 ? offset : 0; }
};

std::size_t onHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string line = trim(std::string(data, size * count));
  if (line.rfind("HTTP/", 0) == 0) {
    t->response = Response{};
    const auto space = line.find(' ');
    if (space != std::string::npos) t->response.status = std::atol(line.c_str() + space + 1);
  } else if (startsWithNoCase(line, "x-linked-etag:")) {
    t->announcedSha256 = sha256FromEtag(trim(line.substr(14)));
  } else if (startsWithNoCase(line, "x-linked-size:")) {
    t->announcedLinkedSize = parseNumber(trim(line.substr(14)));
  } else if (startsWithNoCase(line, "etag:")) {
    t->response.etagSha256 = sha256FromEtag(trim(line.substr(5)));
  } else if (startsWithNoCase(line, "content-length:")) {
    t->response.contentLength = parseNumber(trim(line.substr(15)));
  } else if (startsWithNoCase(line, "content-range:")) {
    // "bytes 100-199/200" or "bytes */200"
    std::string value = trim(line.substr(14));
    if (startsWithNoCase(value, "bytes")) value = trim(value.substr(5));
    const auto slash = value.find('/');
    if (slash != std::string::npos) {
      t->response.rangeTotal = parseNumber(value.substr(slash + 1));
      const auto dash = value.find('-');
      if (dash != std::string::npos && dash < slash)
        t->response.rangeStart = parseNumber(value.substr(0, dash));
    }
  }
  return size * count;
}

bool writeAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::size_t onBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  const long status = t->response.status;
  if (status != 200 && status != 206) {
    if (t->errorBody.size() < 512) t->errorBody.append(data, std::min<std::size_t>(bytes, 512));
    return bytes;  // an error page: read it, never store it
  }
  if (!t->bodyStarted) {
    t->bodyStarted = true;
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
    if (status == 206) {
      if (!t->response.rangeStart || *t->response.rangeStart != t->offset) {
        t->abortKind = Kind::Http;
        t->abortReason =
            fmt::format("the server resumed at byte {} instead of {}",
                        t->response.rangeStart ? std::to_string(*t->response.rangeStart) : "?", t->offset);
        return 0;
      }
      flags |= O_APPEND;
    } else {
      flags |= O_TRUNC;  // a full answer (a server without range support): start again
      if (t->offset > 0)
        logger().info("{}: the server sent the whole file again; restarting", t->request->url);
    }
    t->fd = ::open(t->part.c_str(), flags, 0644);
    if (t->fd < 0) {
      t->abortReason = fmt::format("cannot write {}: {}", t->part, errnoText(errno));
      return 0;
    }
  }
  if (!writeAll(t->fd, data, bytes)) {
    t->abortReason = fmt::format("cannot write {}: {}", t->part, errnoText(errno));
    return 0;
  }
  t->written += bytes;
  return bytes;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->request->isCancelled && t->request->isCancelled()) {
    t->cancelled = true;
    return 1;
  }
  const auto now = std::chrono::steady_clock::now();
  if (t->request->onProgress && t->bodyStarted && now - t->lastProgress >= std::chrono::milliseconds(100)) {
    t->lastProgress = now;
    DownloadProgress p;
    p.received = t->base() + t->written;
    p.total = t->total();
    p.resumedFrom = t->base();
    const double seconds = std::chrono::duration<double>(now - t->started).count();
    p.bytesPerSecond = seconds > 0 ? static_cast<double>(t->written) / seconds : 0;
    t->request->onProgress(p);
  }
  return 0;
}

std::uint64_t fileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

void removePart(const std::string& part) {
  std::error_code ec;
  fs::remove(part, ec);
}

// fsync the .part file, rename it over the destination, fsync the folder.
void place(const std::string& part, const std::string& destination, const std::string& url) {
  auto fail = [&](const std::string& what) {
    return DownloadError(Kind::Io, fmt::format("downloaded {} but could not place it at {}: {}: {}", url,
                                               destination, what, errnoText(errno)));
  };
  const int fd = ::open(part.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail("open " + part);
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) throw fail("fsync " + part);
  if (::rename(part.c_str(), destination.c_str()) != 0) throw fail("rename " + part);
  const std::string folder = fs::path(destination).parent_path().string();
  const int dir = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

struct Attempt {
  CURLcode code = CURLE_OK;
  std::string curlError;
  Transfer transfer;
};

// What every request of ours sets: the address, redirects followed, the callbacks that read the headers
// and poll the cancel (into `t`), our user agent, and the error text into `errorBuffer`. `agent` and
// `errorBuffer` must outlive the request. Proxies: libcurl reads http_proxy, https_proxy/HTTPS_PROXY,
// ALL_PROXY and no_proxy itself.
void setCommonOptions(CURL* curl, const std::string& url, const std::string& agent, char* errorBuffer,
                      Transfer& t, curl_slist* headers) {
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errorBuffer);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(curl, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, agent.c_str());
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onProgress);
  curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
  if (headers) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
}

std::string userAgent() {
  return "sapiens2-studio/" + versionString();
}

void runTransfer(const DownloadRequest& request, const std::string& part, std::uint64_t offset, Attempt& a) {
  Transfer& t = a.transfer;
  t.request = &request;
  t.part = part;
  t.offset = offset;
  CURL* curl = curl_easy_init();
  if (!curl) throw DownloadError(Kind::Network, "cannot download " + request.url + ": curl_easy_init failed");
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  const std::string range = std::to_string(offset) + "-";
  const std::string agent = userAgent();
  setCommonOptions(curl, request.url, agent, errorBuffer, t, headers);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, request.connectTimeoutSeconds);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, request.stallSeconds);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  if (offset > 0) curl_easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  a.code = curl_easy_perform(curl);
  a.curlError = errorBuffer[0] ? errorBuffer : curl_easy_strerror(a.code);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  if (t.response.status == 0) t.response.status = status;
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (t.fd >= 0) {
    ::close(t.fd);
    t.fd = -1;
  }
}

}  // namespace

bool downloadSupported() {
  return true;
}

std::string downloadBackendVersion() {
  return curl_version();
}

namespace {

// The .part file's size to resume from (0: from the start), its folder created.
std::uint64_t prepareDestination(const DownloadRequest& request, const std::string& part,
                                 const std::string& where) {
  std::error_code ec;
  const fs::path folder = fs::path(request.destination).parent_path();
  if (!folder.empty()) fs::create_directories(folder, ec);
  if (ec)
    throw DownloadError(Kind::Io,
                        fmt::format("cannot create the folder {}: {}", folder.string(), ec.message()));
  std::uint64_t offset = 0;
  if (request.resume && fs::is_regular_file(part, ec)) offset = fileSize(part);
  if (!request.resume) removePart(part);
  if (offset > 0) logger().info("resuming {} at {} ({})", where, offset, humanBytes(offset));
  return offset;
}

// The transfer, once more from the start when the server cannot resume at `offset` (which then is 0).
Attempt transferWithRestart(const DownloadRequest& request, const std::string& part, std::uint64_t& offset,
                            const std::string& where) {
  Attempt attempt;
  for (int round = 0; round < 2; ++round) {
    attempt = Attempt{};
    runTransfer(request, part, offset, attempt);
    const Transfer& t = attempt.transfer;
    // 416: nothing left to send from `offset`. Complete if the server's total is what we have, else the
    // .part file is not a prefix of this file: start again.
    if (offset > 0 && t.response.status == 416) {
      if (t.response.rangeTotal && *t.response.rangeTotal == offset) break;
      logger().warn("{}: the server cannot resume at byte {}; downloading from the start", where, offset);
      removePart(part);
      offset = 0;
      continue;
    }
    break;
  }
  return attempt;
}

// Throws what ended the transfer early: a cancel, an abort, an HTTP error or a broken connection.
void checkTransferEnded(const Attempt& attempt, const std::string& part, const std::string& where,
                        bool complete416) {
  const Transfer& t = attempt.transfer;
  const long status = t.response.status;
  if (t.cancelled) {
    throw DownloadError(Kind::Cancelled,
                        fmt::format("download cancelled: {} ({} kept in {}; run again to resume)", where,
                                    humanBytes(fileSize(part)), part));
  }
  if (!t.abortReason.empty()) {
    if (t.abortKind == Kind::Http) removePart(part);
    throw DownloadError(t.abortKind, fmt::format("download failed: {}: {}", where, t.abortReason), status);
  }
  if (!complete416 && status != 200 && status != 206 && status != 0) {
    std::string hint;
    if (status == 401 || status == 403)
      hint = " (the repository may require accepting its license on huggingface.co and a token in $HF_TOKEN)";
    if (status == 404) hint = " (no such file at that address)";
    std::string body = trim(t.errorBody.substr(0, 200));
    throw DownloadError(
        Kind::Http,
        fmt::format("download failed: {}: HTTP {}{}{}", where, status, hint, body.empty() ? "" : ": " + body),
        status);
  }
  if (attempt.code != CURLE_OK) {
    const std::uint64_t have = fileSize(part);
    const std::optional<std::uint64_t> total = t.total();
    const std::string detail =
        attempt.code == CURLE_PARTIAL_FILE && total
            ? fmt::format("the server announced {} bytes but the connection ended after {}", *total, have)
            : attempt.curlError;
    throw DownloadError(
        Kind::Network,
        fmt::format("download interrupted: {}: {} ({} of {} kept in {}; run again to resume)", where, detail,
                    humanBytes(have), total ? humanBytes(*total) : std::string("an unknown size"), part));
  }
}

// The hash to check the file against: the caller's, else the one the server announced, else none.
std::string expectedHash(const DownloadRequest& request, const Transfer& t, std::string& source) {
  if (!request.expectedSha256.empty()) {
    source = "expected";
    const std::string hex = sha256FromEtag(request.expectedSha256);
    return hex.empty() ? request.expectedSha256 : hex;
  }
  source = "the server announced";
  return request.checkAnnouncedSha256 ? t.announcedSha256 : std::string();
}

// The file's SHA-256 against the expected one ("" when there is nothing to check against). A cancel
// keeps the .part file: the next run finds it complete and checks it again.
std::string checkHash(const DownloadRequest& request, const Transfer& t, const std::string& part,
                      const std::string& where,
                      const std::function<DownloadError(Kind, const std::string&)>& reject) {
  std::string source;
  const std::string expected = expectedHash(request, t, source);
  if (expected.empty()) return "";
  const std::uint64_t total = fileSize(part);
  auto lastReport = std::chrono::steady_clock::now();
  auto progress = [&](std::uint64_t done) {
    const auto now = std::chrono::steady_clock::now();
    if (!request.onProgress || (done < total && now - lastReport < std::chrono::milliseconds(100))) return;
    lastReport = now;
    DownloadProgress p;
    p.received = done;
    p.total = total;
    p.verifying = true;
    request.onProgress(p);
  };
  std::optional<std::string> actual;
  try {
    actual = sha256OfFile(part, progress, request.isCancelled);
  } catch (const std::runtime_error& e) {
    throw DownloadError(Kind::Io, fmt::format("download failed: {}: {}", where, e.what()));
  }
  if (!actual)
    throw DownloadError(Kind::Cancelled, fmt::format("download cancelled while checking its SHA-256: {} "
                                                     "({} kept in {}; run again to resume)",
                                                     where, humanBytes(total), part));
  if (*actual != expected)
    throw reject(Kind::HashMismatch, fmt::format("its SHA-256 is {} but {} {}", *actual, source, expected));
  logger().info("{}: SHA-256 {} as {}", where, *actual, source);
  return *actual;
}

struct Received {
  std::uint64_t bytes = 0;
  std::string sha256;
};

// The size the server announced and the one the caller expects, the hash, and the caller's own check; a
// file that fails one is removed.
Received checkReceived(const DownloadRequest& request, const Transfer& t, const std::string& part,
                       const std::string& where, bool complete416) {
  Received received;
  received.bytes = fileSize(part);
  const std::uint64_t bytes = received.bytes;
  const std::optional<std::uint64_t> announced = complete416 ? t.response.rangeTotal : t.total();
  auto reject = [&](Kind kind, const std::string& why) {
    removePart(part);
    return DownloadError(kind, fmt::format("download rejected, nothing placed: {}: {}", where, why),
                         t.response.status);
  };
  if (announced && bytes != *announced)
    throw reject(Kind::SizeMismatch,
                 fmt::format("received {} bytes but the server announced {}", bytes, *announced));
  if (request.expectedBytes && bytes != *request.expectedBytes)
    throw reject(Kind::SizeMismatch,
                 fmt::format("received {} bytes, expected {}", bytes, *request.expectedBytes));
  received.sha256 = checkHash(request, t, part, where, reject);
  if (request.validate) {
    try {
      request.validate(part);
    } catch (const std::exception& e) {
      throw reject(Kind::Invalid, e.what());
    }
  }
  return received;
}

}  // namespace

DownloadResult downloadFile(const DownloadRequest& request) {
  initCurlOnce();
  const std::string& destination = request.destination;
  const std::string part = partialPath(destination);
  const std::string where = fmt::format("{} -> {}", request.url, destination);
  std::uint64_t offset = prepareDestination(request, part, where);
  const Attempt attempt = transferWithRestart(request, part, offset, where);
  const Transfer& t = attempt.transfer;
  const long status = t.response.status;
  const bool complete416 = offset > 0 && status == 416;
  checkTransferEnded(attempt, part, where, complete416);
  if (!complete416 && !t.bodyStarted) {
    // An empty body: create the (empty) file so that it can be checked and placed like any other.
    const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw DownloadError(Kind::Io, fmt::format("cannot write {}: {}", part, errnoText(errno)));
    ::close(fd);
  }
  const Received received = checkReceived(request, t, part, where, complete416);
  const std::uint64_t bytes = received.bytes;
  place(part, destination, request.url);
  DownloadResult result;
  result.path = destination;
  result.bytes = bytes;
  result.sha256 = received.sha256;
  result.resumedFrom = status == 206 || complete416 ? offset : 0;
  result.httpStatus = status;
  if (request.onProgress) {
    DownloadProgress p;
    p.received = bytes;
    p.total = bytes;
    p.resumedFrom = result.resumedFrom;
    request.onProgress(p);
  }
  logger().info("downloaded {} ({}{})", where, humanBytes(bytes),
                result.resumedFrom ? fmt::format(", resumed at {}", humanBytes(result.resumedFrom)) : "");
  return result;
}

RemoteFile probeRemoteFile(const std::string& url, const std::vector<std::string>& headers,
                           long timeoutSeconds, const std::function<bool()>& isCancelled) {
  initCurlOnce();
  DownloadRequest request;  // for the callbacks' Transfer
  request.url = url;
  request.isCancelled = isCancelled;
  Transfer t;
  t.request = &request;
  CURL* curl = curl_easy_init();
  if (!curl) throw DownloadError(Kind::Network, "cannot ask " + url + ": curl_easy_init failed");
  char errorBuffer[CURL_ERROR_SIZE] = {0};
  curl_slist* list = nullptr;
  for (const std::string& h : headers) list = curl_slist_append(list, h.c_str());
  const std::string agent = userAgent();
  setCommonOptions(curl, url, agent, errorBuffer, t, list);
  curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeoutSeconds);
  const CURLcode code = curl_easy_perform(curl);
  const std::string curlError = errorBuffer[0] ? errorBuffer : curl_easy_strerror(code);
  curl_slist_free_all(list);
  curl_easy_cleanup(curl);
  if (t.cancelled) throw DownloadError(Kind::Cancelled, "cancelled asking " + url + " for its size");
  if (code != CURLE_OK)
    throw DownloadError(Kind::Network, fmt::format("cannot ask {} for its size: {}", url, curlError));
  const long status = t.response.status;
  if (status != 200)
    throw DownloadError(Kind::Http, fmt::format("cannot ask {} for its size: HTTP {}", url, status), status);
  RemoteFile file;
  file.httpStatus = status;
  file.bytes = t.announcedLinkedSize ? t.announcedLinkedSize : t.response.contentLength;
  file.sha256 = !t.announcedSha256.empty() ? t.announcedSha256 : t.response.etagSha256;
  return file;
}

#endif

}  // namespace sapiens
