// Models > Manage Models as a user meets it: the catalogue with each file's state, a download that shows
// its progress, is cancelled half-way and resumes to a valid file, and one whose SHA-256 is not the hub's
// (a dialog, no file). Files come from a local HTTP server on 127.0.0.1 that answers as the hub does
// (a redirect carrying X-Linked-Etag and X-Linked-Size); the served model is the tiny seg fixture under a
// test catalogue entry of its own architecture, so core's checks run unchanged. After the checkpoint
// folder changes, the rows show the new folder's files, never an answer for the old one.

#include "checkpoint_jobs.h"
#include "local_http_server.h"
#include "model_manager_dialog.h"
#include "test_support.h"

#include "sapiens/common/log.h"
#include "sapiens/model/architecture_inference.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/net/http_download.h"
#include "sapiens/net/sha256.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

using sapiens::studio::CheckpointJobs;
using sapiens::studio::ModelManagerDialog;
using sapiens::test::LocalHttpServer;

namespace {

constexpr int kTimeoutMs = 30000;

QByteArray readAll(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QString segFixture() {
  return QString::fromStdString(sapiens::test::fixture("golden/seg/model.safetensors"));
}

// A catalogue entry whose architecture is the seg fixture's.
sapiens::zoo::Entry tinySegEntry() {
  const auto file = sapiens::SafetensorsFile::open(segFixture().toStdString());
  sapiens::TensorShapes shapes;
  for (const auto& t : file.tensors()) shapes[t.name] = t.shape;
  return sapiens::zoo::customEntry("seg-tiny", "test/sapiens2-seg-tiny",
                                   sapiens::inferArchitecture(shapes, "model.safetensors"));
}

int rowOf(QTableWidget* table, const QString& id) {
  for (int r = 0; r < table->rowCount(); ++r)
    if (table->item(r, ModelManagerDialog::IdColumn)->text() == id) return r;
  return -1;
}

QString stateOf(QTableWidget* table, const QString& id) {
  const int r = rowOf(table, id);
  return r < 0 ? QString() : table->item(r, ModelManagerDialog::StateColumn)->text();
}

// As the hub serves an LFS file: resolve/main/FILE redirects to the CDN's copy with size and hash.
void serveLikeTheHub(LocalHttpServer& server, const sapiens::zoo::Entry& entry, LocalHttpServer::File cdn,
                     const QByteArray& announcedSha256) {
  const std::string cdnPath = "/cdn/" + entry.fileName;
  const auto size = cdn.body.size();
  server.serve(cdnPath, std::move(cdn));
  LocalHttpServer::File redirect;
  redirect.redirectTo = server.base() + cdnPath;
  redirect.headers = "X-Linked-Etag: \"" + announcedSha256.toStdString() +
                     "\"\r\nX-Linked-Size: " + std::to_string(size) + "\r\n";
  server.serve("/" + entry.repository + "/resolve/main/" + entry.fileName, redirect);
}

QByteArray sha256(const QByteArray& bytes) {
  return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
}

// A server on 127.0.0.1 that takes connections into its backlog and never answers: a request to it waits
// until its client gives up (as on a network that drops the answers).
class SilentServer {
 public:
  SilentServer() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(fd_, 16) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      qFatal("SilentServer: cannot listen on 127.0.0.1");
    port_ = ntohs(address.sin_port);
  }
  ~SilentServer() { ::close(fd_); }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;

  QString base() const { return QStringLiteral("http://127.0.0.1:%1").arg(port_); }
  /// Whether a client has connected (and waits) within `ms`.
  bool waitForClient(int ms) const {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, ms) > 0;
  }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace

class TestModelManager : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);
    ::setenv("no_proxy", "127.0.0.1,localhost", 1);
    for (const char* name :
         {"http_proxy", "HTTP_PROXY", "ALL_PROXY", "all_proxy", "HF_TOKEN", "SAPIENS_CHECKPOINT_ROOT"})
      ::unsetenv(name);
  }

  void listsTheCatalogueWithEachFilesState() {
    LocalHttpServer server;  // knows one file; every other question gets a 404
    const sapiens::zoo::Entry* pose = sapiens::zoo::find("pose-0.4b");
    LocalHttpServer::File announced;
    announced.redirectTo = server.base() + "/cdn/pose";
    announced.headers = "X-Linked-Size: 1680000000\r\n";
    server.serve("/" + pose->repository + "/resolve/main/" + pose->fileName, announced);
    server.serve("/cdn/pose", {QByteArray("x")});
    QTemporaryDir root;
    QDir(root.path()).mkpath("seg");
    QVERIFY(QFile::copy(segFixture(), root.path() + "/seg/sapiens2_0.4b_seg.safetensors"));
    CheckpointJobs jobs;
    jobs.setEndpoint(QString::fromStdString(server.base()));
    ModelManagerDialog dialog(&jobs, sapiens::zoo::catalogue(), root.path());
    dialog.show();
    auto* table = dialog.findChild<QTableWidget*>("modelTable");
    QVERIFY(table);
    QCOMPARE(table->rowCount(), static_cast<int>(sapiens::zoo::catalogue().size()));
    QTRY_VERIFY_WITH_TIMEOUT(stateOf(table, "matting-1b") == "missing", kTimeoutMs);  // the last one checked
    QVERIFY2(stateOf(table, "seg-0.4b").startsWith("invalid: ") &&
                 stateOf(table, "seg-0.4b").contains("is not sapiens2_0.4b_seg.safetensors"),
             qPrintable(stateOf(table, "seg-0.4b")));
    QCOMPARE(stateOf(table, "pose-5b"), QString("missing"));
    const int poseRow = rowOf(table, "pose-0.4b");
    QTRY_COMPARE_WITH_TIMEOUT(table->item(poseRow, ModelManagerDialog::DownloadSizeColumn)->text(),
                              QLocale().formattedDataSize(1680000000, 1, QLocale::DataSizeSIFormat),
                              kTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(
        table->item(rowOf(table, "seg-1b"), ModelManagerDialog::DownloadSizeColumn)->text(),
        QString("unknown"), kTimeoutMs);
    QCOMPARE(table->item(poseRow, ModelManagerDialog::PathColumn)->text(),
             root.path() + "/pose/sapiens2_0.4b_pose.safetensors");
  }

  void aDownloadIsCancelledHalfWayAndResumesToAValidFile() {
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    const sapiens::zoo::Entry entry = tinySegEntry();
    const QByteArray body = readAll(segFixture());
    LocalHttpServer server;
    LocalHttpServer::File stalling{body};
    stalling.stallAfter = 600000;  // the first transfer stops here and waits
    serveLikeTheHub(server, entry, stalling, sha256(body));
    QTemporaryDir root;
    CheckpointJobs jobs;
    jobs.setEndpoint(QString::fromStdString(server.base()));
    ModelManagerDialog dialog(&jobs, {entry}, root.path());
    QSignalSpy changed(&dialog, &ModelManagerDialog::checkpointsChanged);
    dialog.show();
    auto* table = dialog.findChild<QTableWidget*>("modelTable");
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(table, "seg-tiny"), QString("missing"), kTimeoutMs);

    table->selectRow(0);
    QTest::mouseClick(dialog.findChild<QPushButton*>("downloadButton"), Qt::LeftButton);
    const QString part = root.path() + "/seg/seg-tiny.safetensors.part";
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(part).size() == 600000, kTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(stateOf(table, "seg-tiny").startsWith("downloading "), kTimeoutMs);
    auto* overall = dialog.findChild<QLabel*>("overallLabel");
    QVERIFY2(overall->text().startsWith("Downloading 1 of 1: seg-tiny"), qPrintable(overall->text()));
    QTest::mouseClick(dialog.findChild<QPushButton*>("cancelDownloadsButton"), Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(stateOf(table, "seg-tiny").startsWith("missing (600"), kTimeoutMs);
    QCOMPARE(QFileInfo(part).size(), qint64{600000});
    QVERIFY(!dialog.findChild<QMessageBox*>("failureDialog"));  // a cancel is not an error

    serveLikeTheHub(server, entry, {body}, sha256(body));  // the server sends everything now
    QTest::mouseClick(dialog.findChild<QPushButton*>("downloadButton"), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(table, "seg-tiny"), QString("valid"), kTimeoutMs);
    QVERIFY(readAll(root.path() + "/seg/seg-tiny.safetensors") == body);
    QVERIFY(!QFile::exists(part));
    QCOMPARE(server.requests().back().range, std::string("bytes=600000-"));
    QCOMPARE(changed.count(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(overall->text(), QString("No download running."), kTimeoutMs);

    // Verify compares the file with the hub's hash.
    QTest::mouseClick(dialog.findChild<QPushButton*>("verifyButton"), Qt::LeftButton);
    auto* result = dialog.findChild<QLabel*>("resultLabel");
    QTRY_VERIFY_WITH_TIMEOUT(result->text().contains("its SHA-256 is the hub's: " + sha256(body)),
                             kTimeoutMs);
    QCOMPARE(stateOf(table, "seg-tiny"), QString("valid"));
    QVERIFY(!dialog.findChild<QMessageBox*>("failureDialog"));
  }

  void aDownloadGoesBeforeTheSizeQuestionsStillQueued() {
    // A download holds the jobs' thread (its server stalls) while the whole catalogue's size questions
    // and then a second download are queued; once the first is cancelled, the second goes next.
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    const sapiens::zoo::Entry first = tinySegEntry();
    const sapiens::zoo::Entry second =
        sapiens::zoo::customEntry("seg-tiny-b", "test/sapiens2-seg-tiny-b", first.architecture());
    const QByteArray body = readAll(segFixture());
    LocalHttpServer server;  // the official files get 404s
    LocalHttpServer::File stalling{body};
    stalling.stallAfter = 600000;
    serveLikeTheHub(server, first, stalling, sha256(body));
    serveLikeTheHub(server, second, {body}, sha256(body));
    QTemporaryDir root;
    CheckpointJobs jobs;
    jobs.setEndpoint(QString::fromStdString(server.base()));
    jobs.enqueue(CheckpointJobs::Kind::Download, first, root.path());
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo(root.path() + "/seg/seg-tiny.safetensors.part").size() == 600000,
                             kTimeoutMs);
    for (const sapiens::zoo::Entry& e : sapiens::zoo::catalogue())
      jobs.enqueue(CheckpointJobs::Kind::Probe, e, root.path());
    jobs.enqueue(CheckpointJobs::Kind::Download, second, root.path());
    jobs.cancel(CheckpointJobs::Kind::Download, "seg-tiny");
    QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(root.path() + "/seg/seg-tiny-b.safetensors"), kTimeoutMs);
    const auto requests = server.requests();
    const auto secondGet = std::find_if(requests.begin(), requests.end(), [](const auto& r) {
      return r.method == "GET" && r.target.find("seg-tiny-b") != std::string::npos;
    });
    QVERIFY(secondGet != requests.end());
    QVERIFY2(std::none_of(requests.begin(), secondGet, [](const auto& r) { return r.method == "HEAD"; }),
             "the download waited for the size questions");
  }

  // The jobs' thread is held by a size question to a server that never answers; the dialog shows folder
  // A (holding a damaged file) and queues its check, then the folder becomes B (empty). Once the thread
  // is free, the row shows B's state: "missing", with B's path, never A's "invalid".
  void aCheckOfTheNewFolderIsShownNotTheOldOnes() {
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    const sapiens::zoo::Entry entry = tinySegEntry();
    QTemporaryDir a, b;
    QVERIFY(QDir(a.path()).mkpath("seg"));
    QFile damaged(a.path() + "/seg/seg-tiny.safetensors");
    QVERIFY(damaged.open(QIODevice::WriteOnly));
    damaged.write(QByteArray(4096, 'x'));
    damaged.close();
    SilentServer silent;
    CheckpointJobs jobs;
    jobs.setEndpoint(silent.base());
    jobs.enqueue(CheckpointJobs::Kind::Probe, entry, a.path());
    QVERIFY(silent.waitForClient(kTimeoutMs));  // the thread waits on it now
    QSignalSpy checks(&jobs, &CheckpointJobs::checked);
    ModelManagerDialog dialog(&jobs, {entry}, a.path());
    dialog.show();
    dialog.setRoot(b.path());
    jobs.cancel(CheckpointJobs::Kind::Probe, "seg-tiny");  // frees the thread

    auto* table = dialog.findChild<QTableWidget*>("modelTable");
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(table, "seg-tiny"), QString("missing"), kTimeoutMs);
    QCOMPARE(table->item(0, ModelManagerDialog::PathColumn)->text(), b.path() + "/seg/seg-tiny.safetensors");
    for (const QList<QVariant>& check : checks)
      QCOMPARE(check.at(1).toString(), b.path());  // A's check was dropped when the folder changed
  }

  void aFileWhoseHashIsNotTheHubsIsKeptNowhereAndSaysSo() {
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    const sapiens::zoo::Entry entry = tinySegEntry();
    const QByteArray body = readAll(segFixture());
    const QByteArray announced = sha256("another file");
    LocalHttpServer server;
    serveLikeTheHub(server, entry, {body}, announced);
    QTemporaryDir root;
    CheckpointJobs jobs;
    jobs.setEndpoint(QString::fromStdString(server.base()));
    ModelManagerDialog dialog(&jobs, {entry}, root.path());
    dialog.show();
    dialog.download({"seg-tiny"});
    QMessageBox* box = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((box = dialog.findChild<QMessageBox*>("failureDialog")) && box->isVisible(),
                             kTimeoutMs);
    QVERIFY2(box->text().contains(root.path() + "/seg/seg-tiny.safetensors"), qPrintable(box->text()));
    QVERIFY2(box->informativeText().contains(announced) && box->informativeText().contains(sha256(body)),
             qPrintable(box->informativeText()));
    QVERIFY(QDir(root.path() + "/seg").entryList(QDir::Files).isEmpty());
    box->accept();
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(dialog.findChild<QTableWidget*>("modelTable"), "seg-tiny"),
                              QString("missing"), kTimeoutMs);
  }
};

QTEST_MAIN(TestModelManager)
#include "test_model_manager.moc"
