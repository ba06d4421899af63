#pragma once
// A small HTTP/1.1 server on 127.0.0.1 for download tests: a thread with POSIX sockets, one request per
// connection, byte ranges (206 / 416), and misbehaviours on demand (cut the body, lie about the length,
// ignore ranges, stall, fail with a status). Nothing leaves the machine.

#include <QByteArray>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sapiens::test {

class LocalHttpServer {
 public:
  struct File {
    QByteArray body;
    int status = 200;              ///< anything but 200 is sent as an error page
    bool ignoreRange = false;      ///< answer every request with the whole file (200)
    std::int64_t lengthDelta = 0;  ///< added to the announced Content-Length (a lying server)
    std::int64_t cutAfter = -1;    ///< close the connection after this many body bytes ...
    int cutTimes = 1;              ///< ... on this many requests
    std::int64_t stallAfter = -1;  ///< stop sending after this many bytes until the client leaves
    std::string headers{};         ///< extra response headers, "Name: value\r\n" each
    std::string redirectTo{};      ///< answer 302 to this URL (with `headers`), as the hub does for LFS
  };
  struct Request {
    std::string method;
    std::string target;  ///< as sent: "/path", or "http://host/path" through a proxy
    std::string range;   ///< the Range header's value, "" when absent
  };

  /// Binds 127.0.0.1 on a free port and starts serving.
  LocalHttpServer();
  ~LocalHttpServer();
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  int port() const { return port_; }
  /// "http://127.0.0.1:PORT"
  std::string base() const;
  /// Serves `file` at `path` ("/a/b"); requests through a proxy match on their path part.
  void serve(const std::string& path, File file);
  std::vector<Request> requests() const;

 private:
  void run();
  void handle(int client);

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::map<std::string, File> files_;
  std::vector<Request> requests_;
  std::thread thread_;
};

}  // namespace sapiens::test
