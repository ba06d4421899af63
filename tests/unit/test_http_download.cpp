// Resumable downloads against a local HTTP server (tests/support/local_http_server.h) on 127.0.0.1:
// complete, cut off midway and resumed with a Range request, a server that ignores ranges, one that
// lies about Content-Length either way, cancel, HTTP errors, an expected size, a proxy from the
// environment, the SHA-256 the hub announces on its redirect (X-Linked-Etag) or the caller expects.
// Nothing here reaches the internet.

#include "local_http_server.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/net/http_download.h"
#include "sapiens/net/sha256.h"
#include "test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>

using namespace sapiens;
using sapiens::test::LocalHttpServer;

namespace {

QByteArray readAll(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

void writeAll(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(bytes);
}

QByteArray fixtureBytes() {
  return readAll(QString::fromStdString(test::fixture("golden/seg/model.safetensors")));
}

// A safetensors header check, as `models download` does with the catalogue's architecture on top.
void checkSafetensors(const std::string& path) {
  SafetensorsFile::open(path);
}

// Serves `body` as the hub serves an LFS file: /resolve/m.safetensors answers 302 to /cdn/m.safetensors
// with the file's size and (announced) hash in X-Linked-Size and X-Linked-Etag.
void serveLikeTheHub(LocalHttpServer& server, const QByteArray& body, const std::string& announcedSha256) {
  server.serve("/cdn/m.safetensors", {body});
  LocalHttpServer::File redirect;
  redirect.redirectTo = server.base() + "/cdn/m.safetensors";
  redirect.headers =
      "X-Linked-Etag: \"" + announcedSha256 + "\"\r\nX-Linked-Size: " + std::to_string(body.size()) + "\r\n";
  server.serve("/resolve/m.safetensors", redirect);
}

std::string sha256Of(const QByteArray& bytes) {
  return sha256Hex(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

}  // namespace

class TestHttpDownload : public QObject {
  Q_OBJECT

 private:
  QByteArray body_;

 private Q_SLOTS:
  void initTestCase() {
    if (!downloadSupported()) QSKIP("built without libcurl");
    // A proxy configured on this machine must not see the local server's traffic.
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    ::unsetenv("http_proxy");
    ::unsetenv("HTTP_PROXY");
    ::unsetenv("ALL_PROXY");
    ::unsetenv("all_proxy");
    body_ = fixtureBytes();
    QVERIFY(body_.size() > 1000000);
  }

  void completeDownloadIsVerifiedAndPlaced() {
    LocalHttpServer server;
    server.serve("/m.safetensors", {body_});
    QTemporaryDir dir;
    const QString dest = dir.path() + "/sub/m.safetensors";
    std::vector<DownloadProgress> progress;
    DownloadRequest request;
    request.url = server.base() + "/m.safetensors";
    request.destination = dest.toStdString();
    request.expectedBytes = static_cast<std::uint64_t>(body_.size());
    request.validate = checkSafetensors;
    request.onProgress = [&](const DownloadProgress& p) { progress.push_back(p); };
    const DownloadResult r = downloadFile(request);
    QCOMPARE(r.bytes, static_cast<std::uint64_t>(body_.size()));
    QCOMPARE(r.resumedFrom, std::uint64_t{0});
    QCOMPARE(r.httpStatus, 200L);
    QVERIFY(readAll(dest) == body_);
    QVERIFY(!QFile::exists(dest + ".part"));
    QVERIFY(!progress.empty());
    QCOMPARE(progress.back().received, static_cast<std::uint64_t>(body_.size()));
    QVERIFY(progress.back().total && *progress.back().total == static_cast<std::uint64_t>(body_.size()));
    QCOMPARE(server.requests().size(), std::size_t{1});
    QVERIFY(server.requests()[0].range.empty());
  }

  void cutOffMidwayThenResumedWithARangeRequest() {
    LocalHttpServer server;
    LocalHttpServer::File file{body_};
    file.cutAfter = 600000;  // the first answer stops here and the connection closes
    server.serve("/m.safetensors", file);
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    DownloadRequest request;
    request.url = server.base() + "/m.safetensors";
    request.destination = dest.toStdString();
    request.validate = checkSafetensors;
    try {
      downloadFile(request);
      QFAIL("the cut transfer should fail");
    } catch (const DownloadError& e) {
      QCOMPARE(e.kind(), DownloadError::Kind::Network);
      QVERIFY2(QString(e.what()).contains("run again to resume"), e.what());
      QVERIFY2(QString(e.what()).contains(QString("announced %1 bytes").arg(body_.size())), e.what());
    }
    QVERIFY(!QFile::exists(dest));
    QCOMPARE(QFile(dest + ".part").size(), qint64{600000});

    const DownloadResult r = downloadFile(request);
    QCOMPARE(r.resumedFrom, std::uint64_t{600000});
    QCOMPARE(r.httpStatus, 206L);
    QVERIFY(readAll(dest) == body_);
    QVERIFY(!QFile::exists(dest + ".part"));
    const auto requests = server.requests();
    QCOMPARE(requests.size(), std::size_t{2});
    QCOMPARE(requests[1].range, std::string("bytes=600000-"));
  }

  void aServerIgnoringRangesStartsAgain() {
    LocalHttpServer server;
    LocalHttpServer::File file{body_};
    file.ignoreRange = true;
    server.serve("/m.safetensors", file);
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    writeAll(dest + ".part", QByteArray(1000, 'x'));  // a stale partial file
    DownloadRequest request;
    request.url = server.base() + "/m.safetensors";
    request.destination = dest.toStdString();
    const DownloadResult r = downloadFile(request);
    QCOMPARE(r.resumedFrom, std::uint64_t{0});
    QVERIFY(readAll(dest) == body_);
    QCOMPARE(server.requests()[0].range, std::string("bytes=1000-"));
  }

  void aCompletePartialFileIsPlacedAfterA416() {
    LocalHttpServer server;
    server.serve("/m.safetensors", {body_});
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    writeAll(dest + ".part", body_);
    DownloadRequest request;
    request.url = server.base() + "/m.safetensors";
    request.destination = dest.toStdString();
    request.validate = checkSafetensors;
    const DownloadResult r = downloadFile(request);
    QCOMPARE(r.httpStatus, 416L);
    QVERIFY(readAll(dest) == body_);
  }

  void aServerAnnouncingMoreThanItSendsLeavesNoFile() {
    LocalHttpServer server;
    LocalHttpServer::File file{body_};
    file.lengthDelta = 1000;
    server.serve("/m.safetensors", file);
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    DownloadRequest request;
    request.url = server.base() + "/m.safetensors";
    request.destination = dest.toStdString();
    try {
      downloadFile(request);
      QFAIL("a short body should fail");
    } catch (const DownloadError& e) {
      QVERIFY2(QString(e.what()).contains(
                   QString("the server announced %1 bytes but the connection ended after %2")
                       .arg(body_.size() + 1000)
                       .arg(body_.size())),
               e.what());
    }
    QVERIFY(!QFile::exists(dest));
  }

  void aServerAnnouncingLessThanItSendsIsRejected() {
    LocalHttpServer server;
    LocalHttpServer::File file{body_};
    file.lengthDelta = -1000;
    server.serve("/m.safetensors", file);
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    DownloadRequest request;
    request.url = server.base() + "/m.safetensors";
    request.destination = dest.toStdString();
    request.validate = checkSafetensors;  // the header says how long the file must be
    try {
      downloadFile(request);
      QFAIL("a truncated file should be rejected");
    } catch (const DownloadError& e) {
      QCOMPARE(e.kind(), DownloadError::Kind::Invalid);
      QVERIFY2(QString(e.what()).contains("nothing placed"), e.what());
    }
    QVERIFY(!QFile::exists(dest));
    QVERIFY(!QFile::exists(dest + ".part"));  // complete but wrong: not kept for a resume

    request.validate = nullptr;
    request.expectedBytes = static_cast<std::uint64_t>(body_.size());
    try {
      downloadFile(request);
      QFAIL("the size check should reject it");
    } catch (const DownloadError& e) {
      QCOMPARE(e.kind(), DownloadError::Kind::SizeMismatch);
      QVERIFY2(QString(e.what()).contains(QString("expected %1").arg(body_.size())), e.what());
    }
    QVERIFY(!QFile::exists(dest));
  }

  void cancelKeepsThePartialFileForAResume() {
    LocalHttpServer server;
    LocalHttpServer::File file{body_};
    file.stallAfter = 300000;
    server.serve("/m.safetensors", file);
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    std::uint64_t seen = 0;
    DownloadRequest request;
    request.url = server.base() + "/m.safetensors";
    request.destination = dest.toStdString();
    request.onProgress = [&](const DownloadProgress& p) { seen = p.received; };
    request.isCancelled = [&] { return seen >= 300000; };
    QElapsedTimer timer;
    timer.start();
    try {
      downloadFile(request);
      QFAIL("expected a cancel");
    } catch (const DownloadError& e) {
      QCOMPARE(e.kind(), DownloadError::Kind::Cancelled);
    }
    QVERIFY(timer.elapsed() < 8000);  // did not wait for the stalled server
    QVERIFY(!QFile::exists(dest));
    QCOMPARE(QFile(dest + ".part").size(), qint64{300000});
  }

  void httpErrorsNameTheStatusAndKeepTheOldFile() {
    LocalHttpServer server;
    LocalHttpServer::File forbidden{body_};
    forbidden.status = 403;
    server.serve("/gated.safetensors", forbidden);
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    writeAll(dest, "old");
    DownloadRequest request;
    request.url = server.base() + "/missing.safetensors";
    request.destination = dest.toStdString();
    try {
      downloadFile(request);
      QFAIL("expected 404");
    } catch (const DownloadError& e) {
      QCOMPARE(e.kind(), DownloadError::Kind::Http);
      QCOMPARE(e.httpStatus(), 404L);
      QVERIFY2(QString(e.what()).contains("HTTP 404") && QString(e.what()).contains("/missing.safetensors"),
               e.what());
    }
    request.url = server.base() + "/gated.safetensors";
    try {
      downloadFile(request);
      QFAIL("expected 403");
    } catch (const DownloadError& e) {
      QVERIFY2(QString(e.what()).contains("HF_TOKEN"), e.what());
    }
    QCOMPARE(readAll(dest), QByteArray("old"));
    QVERIFY(!QFile::exists(dest + ".part"));
  }

  void sha256MatchesTheStandardsVectors() {
    QCOMPARE(sha256Hex("abc"),
             std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    QCOMPARE(sha256Hex(""), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    const std::string hex = sha256Hex("abc");
    QCOMPARE(sha256FromEtag("\"" + hex + "\""), hex);
    QCOMPARE(sha256FromEtag("W/\"BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD\""), hex);
    QCOMPARE(sha256FromEtag("\"5d41402abc4b2a76b9719d911017c592\""), std::string());  // an MD5-like ETag
    QTemporaryDir dir;
    writeAll(dir.path() + "/f", body_);
    std::uint64_t reported = 0;
    const auto fileHash =
        sha256OfFile((dir.path() + "/f").toStdString(), [&](std::uint64_t n) { reported = n; });
    QVERIFY(fileHash && *fileHash == sha256Of(body_));
    QCOMPARE(reported, static_cast<std::uint64_t>(body_.size()));
    QVERIFY(!sha256OfFile((dir.path() + "/f").toStdString(), {}, [] { return true; }));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, sha256OfFile((dir.path() + "/none").toStdString()));
  }

  void theHubsAnnouncedSha256IsCheckedAcrossItsRedirect() {
    LocalHttpServer server;
    serveLikeTheHub(server, body_, sha256Of(body_));
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    DownloadRequest request;
    request.url = server.base() + "/resolve/m.safetensors";
    request.destination = dest.toStdString();
    bool verified = false;
    request.onProgress = [&](const DownloadProgress& p) { verified = verified || p.verifying; };
    const DownloadResult r = downloadFile(request);
    QCOMPARE(r.sha256, sha256Of(body_));
    QVERIFY(verified);
    QVERIFY(readAll(dest) == body_);

    const RemoteFile remote = probeRemoteFile(request.url);
    QVERIFY(remote.bytes && *remote.bytes == static_cast<std::uint64_t>(body_.size()));
    QCOMPARE(remote.sha256, sha256Of(body_));
    QCOMPARE(server.requests().back().method, std::string("HEAD"));
  }

  void aWrongSha256KeepsNoFileAndNamesBothHashes() {
    LocalHttpServer server;
    const std::string announced = sha256Hex("another file");
    serveLikeTheHub(server, body_, announced);
    QTemporaryDir dir;
    const QString dest = dir.path() + "/m.safetensors";
    writeAll(dest, "the old file");
    DownloadRequest request;
    request.url = server.base() + "/resolve/m.safetensors";
    request.destination = dest.toStdString();
    try {
      downloadFile(request);
      QFAIL("a file whose hash is not the announced one must be rejected");
    } catch (const DownloadError& e) {
      QCOMPARE(e.kind(), DownloadError::Kind::HashMismatch);
      const QString what = e.what();
      QVERIFY2(what.contains(QString::fromStdString(announced)) &&
                   what.contains(QString::fromStdString(sha256Of(body_))) && what.contains(dest),
               e.what());
    }
    QCOMPARE(readAll(dest), QByteArray("the old file"));
    QVERIFY(!QFile::exists(dest + ".part"));

    // The caller's hash wins over the server's; switched off, neither is checked.
    request.expectedSha256 = sha256Of(body_);
    QCOMPARE(downloadFile(request).sha256, sha256Of(body_));
    request.expectedSha256.clear();
    request.checkAnnouncedSha256 = false;
    request.resume = false;
    QCOMPARE(downloadFile(request).sha256, std::string());
  }

  void theProxyComesFromTheEnvironment() {
    LocalHttpServer proxy;
    proxy.serve("/facebook/x/resolve/main/m.safetensors", {body_});
    ::setenv("http_proxy", proxy.base().c_str(), 1);
    QTemporaryDir dir;
    DownloadRequest request;
    request.url = "http://sapiens-download-test.invalid/facebook/x/resolve/main/m.safetensors";
    request.destination = (dir.path() + "/m.safetensors").toStdString();
    const DownloadResult r = downloadFile(request);
    ::unsetenv("http_proxy");
    QCOMPARE(r.bytes, static_cast<std::uint64_t>(body_.size()));
    QCOMPARE(proxy.requests().size(), std::size_t{1});
    QCOMPARE(proxy.requests()[0].target, request.url);  // the absolute form a proxy receives
  }
};

QTEST_GUILESS_MAIN(TestHttpDownload)
#include "test_http_download.moc"
