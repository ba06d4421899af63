// Resumable downloads against a local HTTP server (tests/support/local_http_server.h) on 127.0.0.1:
// complete, cut off midway and resumed with a Range request, a server that ignores ranges, one that
// lies about Content-Length either way, cancel, HTTP errors, an expected size, a proxy from the
// environment. Nothing here reaches the internet.

#include "local_http_server.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/net/http_download.h"
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
