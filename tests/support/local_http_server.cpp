#include "local_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace sapiens::test {
namespace {

bool sendAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

LocalHttpServer::LocalHttpServer() {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener_ < 0) throw std::runtime_error("LocalHttpServer: socket failed");
  const int one = 1;
  ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener_, 16) != 0)
    throw std::runtime_error(std::string("LocalHttpServer: bind/listen failed: ") + std::strerror(errno));
  socklen_t length = sizeof address;
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { run(); });
}

LocalHttpServer::~LocalHttpServer() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  ::close(listener_);
}

std::string LocalHttpServer::base() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void LocalHttpServer::serve(const std::string& path, File file) {
  std::lock_guard<std::mutex> lock(mutex_);
  files_[path] = std::move(file);
}

std::vector<LocalHttpServer::Request> LocalHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

void LocalHttpServer::run() {
  while (!stopping_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    handle(client);  // one at a time: the tests download one file at a time
    ::close(client);
  }
}

void LocalHttpServer::handle(int client) {
  std::string head;
  char buffer[4096];
  while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return;
    const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    head.append(buffer, static_cast<std::size_t>(n));
  }
  Request request;
  const std::string firstLine = head.substr(0, head.find("\r\n"));
  const auto s1 = firstLine.find(' ');
  const auto s2 = firstLine.find(' ', s1 + 1);
  request.method = firstLine.substr(0, s1);
  request.target = firstLine.substr(s1 + 1, s2 - s1 - 1);
  for (std::size_t at = head.find("\r\n"); at != std::string::npos && at + 2 < head.size();) {
    const std::size_t end = head.find("\r\n", at + 2);
    const std::string line = head.substr(at + 2, end - at - 2);
    if (lower(line).rfind("range:", 0) == 0) {
      std::string value = line.substr(6);
      value.erase(0, value.find_first_not_of(' '));
      request.range = value;
    }
    at = end;
  }
  std::string path = request.target;
  if (path.rfind("http://", 0) == 0) path = path.substr(path.find('/', 7));

  File file;
  bool found = false;
  bool cut = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requests_.push_back(request);
    auto it = files_.find(path);
    if (it != files_.end()) {
      found = true;
      if (it->second.cutAfter >= 0 && it->second.cutTimes > 0) {
        cut = true;
        --it->second.cutTimes;
      }
      file = it->second;
    }
  }
  auto respond = [&](int status, const std::string& reason, const std::string& headers, const char* body,
                     std::size_t size, std::int64_t announced) {
    std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n" + headers +
                       "Content-Length: " + std::to_string(announced) + "\r\nConnection: close\r\n\r\n";
    if (!sendAll(client, text.data(), text.size()) || request.method == "HEAD") return;
    std::size_t limit = size;
    if (cut) limit = std::min<std::size_t>(limit, static_cast<std::size_t>(file.cutAfter));
    if (file.stallAfter >= 0) limit = std::min<std::size_t>(limit, static_cast<std::size_t>(file.stallAfter));
    if (!sendAll(client, body, limit)) return;
    if (file.stallAfter >= 0 && limit < size) {
      // Wait until the client gives up (or the server stops), sending nothing.
      for (int i = 0; i < 400 && !stopping_; ++i) {
        pollfd p{client, POLLIN, 0};
        if (::poll(&p, 1, 25) > 0 && ::recv(client, buffer, sizeof buffer, 0) <= 0) return;
      }
    }
  };
  if (!found) {
    const std::string body = "not found";
    respond(404, "Not Found", "", body.data(), body.size(), static_cast<std::int64_t>(body.size()));
    return;
  }
  if (file.status != 200) {
    const std::string body = "error " + std::to_string(file.status);
    respond(file.status, "Error", "", body.data(), body.size(), static_cast<std::int64_t>(body.size()));
    return;
  }
  if (!file.redirectTo.empty()) {
    respond(302, "Found", file.headers + "Location: " + file.redirectTo + "\r\n", "", 0, 0);
    return;
  }
  const auto total = static_cast<std::size_t>(file.body.size());
  std::size_t start = 0;
  bool partial = false;
  if (!request.range.empty() && !file.ignoreRange && request.range.rfind("bytes=", 0) == 0) {
    const std::string spec = request.range.substr(6);
    start = static_cast<std::size_t>(std::stoull(spec.substr(0, spec.find('-'))));
    if (start >= total) {
      respond(416, "Range Not Satisfiable",
              file.headers + "Content-Range: bytes */" + std::to_string(total) + "\r\n", "", 0, 0);
      return;
    }
    partial = true;
  }
  const std::size_t size = total - start;
  const std::int64_t announced = static_cast<std::int64_t>(size) + file.lengthDelta;
  if (partial) {
    respond(206, "Partial Content",
            file.headers + "Content-Range: bytes " + std::to_string(start) + "-" + std::to_string(total - 1) +
                "/" + std::to_string(total) + "\r\nAccept-Ranges: bytes\r\n",
            file.body.constData() + start, size, announced);
  } else {
    respond(200, "OK", file.headers + "Accept-Ranges: bytes\r\n", file.body.constData(), size, announced);
  }
}

}  // namespace sapiens::test
