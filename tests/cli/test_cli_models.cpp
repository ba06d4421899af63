// sapiens-cli models list|verify|download through the real binary; downloads come from a local HTTP
// server on 127.0.0.1 (--endpoint), never from the internet.

#include "local_http_server.h"
#include "sapiens/net/http_download.h"
#include "test_support.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using sapiens::test::fixture;
using sapiens::test::LocalHttpServer;
using sapiens::test::runCli;

using sapiens::test::describe;

namespace {

QByteArray readAll(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return file.readAll();
}

// Keep any proxy of this machine away from the local server.
const QStringList kNoProxy = {
    "no_proxy=127.0.0.1,localhost", "http_proxy=", "HTTP_PROXY=", "ALL_PROXY=", "all_proxy=", "HF_TOKEN="};

}  // namespace

class CliModelsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void listShowsTheCatalogueAndWhatIsPresent() {
    QTemporaryDir root;
    QDir(root.path()).mkpath("seg");
    QVERIFY(QFile::copy(QString::fromStdString(fixture("golden/seg/model.safetensors")),
                        root.path() + "/seg/sapiens2_0.4b_seg.safetensors"));
    auto r = runCli({"models", "list", "--root", root.path()});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY(r.out.contains("pose-0.4b"));
    QVERIFY(r.out.contains("facebook/sapiens2-pretrain-1b-4k"));
    QVERIFY(r.out.contains("pose/sapiens2_0.4b_pose.safetensors"));
    QVERIFY2(r.out.contains(QRegularExpression("seg-0\\.4b\\s+invalid")), qPrintable(r.out));

    r = runCli({"models", "list", "--root", root.path(), "--json"});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const QJsonObject json = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonArray list = json["checkpoints"].toArray();
    QCOMPARE(list.size(), 23);
    for (const auto& value : list) {
      const QJsonObject e = value.toObject();
      QCOMPARE(e["url"].toString(),
               QString("https://huggingface.co/%1/resolve/main/%2")
                   .arg(e["repository"].toString(), e["file"].toString().section('/', 1)));
      QCOMPARE(e["status"].toString(), QString(e["id"].toString() == "seg-0.4b" ? "invalid" : "missing"));
    }
  }

  void verifyFailsOnAWrongFile() {
    QTemporaryDir root;
    auto r = runCli({"models", "verify", "--root", root.path()});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY(r.out.contains("0 valid, 0 invalid"));

    r = runCli({"models", "verify", "seg-0.4b", "--root", root.path()});
    QVERIFY2(r.exitCode == 1 && r.out.contains("missing"), qPrintable(describe(r)));

    QDir(root.path()).mkpath("pose");
    QVERIFY(QFile::copy(QString::fromStdString(fixture("golden/seg/model.safetensors")),
                        root.path() + "/pose/sapiens2_1b_pose.safetensors"));
    r = runCli({"models", "verify", "--root", root.path()});
    QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("holds a seg model, not pose"), qPrintable(r.err));

    r = runCli({"models", "verify", "--hash", "--root", root.path()});
    const QByteArray sha256 =
        QCryptographicHash::hash(readAll(root.path() + "/pose/sapiens2_1b_pose.safetensors"),
                                 QCryptographicHash::Sha256)
            .toHex();
    QVERIFY2(r.out.contains("sha256 " + sha256), qPrintable(describe(r)));

    r = runCli({"models", "verify", "albedo-0.4b", "--root", root.path()});
    QVERIFY2(r.exitCode == 2 && r.err.contains("unknown checkpoint 'albedo-0.4b'"), qPrintable(describe(r)));
  }

  void downloadRejectsAFileThatIsNotTheCheckpoint() {
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    LocalHttpServer server;
    server.serve("/facebook/sapiens2-seg-0.4b/resolve/main/sapiens2_0.4b_seg.safetensors",
                 {readAll(QString::fromStdString(fixture("golden/seg/model.safetensors")))});
    QTemporaryDir root;
    const auto r = runCli({"models", "download", "seg-0.4b", "--root", root.path(), "--endpoint",
                           QString::fromStdString(server.base())},
                          60000, kNoProxy);
    QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("nothing placed") && r.err.contains("is not sapiens2_0.4b_seg.safetensors"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(root.path() + "/seg/sapiens2_0.4b_seg.safetensors"));
    QVERIFY(!QFile::exists(root.path() + "/seg/sapiens2_0.4b_seg.safetensors.part"));
    QCOMPARE(server.requests().size(), std::size_t{1});
  }

  void aDownloadWhoseHashIsNotTheHubsKeepsNoFile() {
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    LocalHttpServer server;
    const QByteArray body = readAll(QString::fromStdString(fixture("golden/seg/model.safetensors")));
    server.serve("/cdn/seg", {body});
    LocalHttpServer::File redirect;  // as the hub answers for an LFS file
    const QByteArray announced =
        QCryptographicHash::hash("not this file", QCryptographicHash::Sha256).toHex();
    redirect.redirectTo = server.base() + "/cdn/seg";
    redirect.headers = "X-Linked-Etag: \"" + announced.toStdString() + "\"\r\n";
    server.serve("/facebook/sapiens2-seg-1b/resolve/main/sapiens2_1b_seg.safetensors", redirect);
    QTemporaryDir root;
    const auto r = runCli({"models", "download", "seg-1b", "--root", root.path(), "--endpoint",
                           QString::fromStdString(server.base())},
                          60000, kNoProxy);
    QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
    const QByteArray actual = QCryptographicHash::hash(body, QCryptographicHash::Sha256).toHex();
    QVERIFY2(r.err.contains("nothing placed") && r.err.contains(announced) && r.err.contains(actual) &&
                 r.err.contains("seg/sapiens2_1b_seg.safetensors"),
             qPrintable(r.err));
    QVERIFY(QDir(root.path() + "/seg").entryList(QDir::Files).isEmpty());
  }

  void anInterruptedDownloadResumesOnTheNextRun() {
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    LocalHttpServer server;
    LocalHttpServer::File file{readAll(QString::fromStdString(fixture("golden/normal/model.safetensors")))};
    file.cutAfter = 500000;  // the first answer breaks off here
    server.serve("/facebook/sapiens2-normal-0.8b/resolve/main/sapiens2_0.8b_normal.safetensors", file);
    QTemporaryDir root;
    const QStringList args{"models",
                           "download",
                           "normal-0.8b",
                           "--root",
                           root.path(),
                           "--endpoint",
                           QString::fromStdString(server.base())};
    const QString part = root.path() + "/normal/sapiens2_0.8b_normal.safetensors.part";
    auto r = runCli(args, 60000, kNoProxy);
    QVERIFY2(r.exitCode == 1 && r.err.contains("run again to resume"), qPrintable(describe(r)));
    QCOMPARE(QFile(part).size(), qint64{500000});
    r = runCli({"models", "list", "--root", root.path()});
    QVERIFY2(r.out.contains(QRegularExpression("normal-0\\.8b\\s+partial")), qPrintable(r.out));

    // The second run continues at byte 500000; the complete file is then checked against the catalogue
    // (this tiny fixture is not the 0.8b model), rejected and removed.
    r = runCli(args, 60000, kNoProxy);
    const auto requests = server.requests();
    QCOMPARE(requests.size(), std::size_t{2});
    QCOMPARE(requests[1].range, std::string("bytes=500000-"));
    QVERIFY2(r.exitCode == 1 && r.err.contains("is not sapiens2_0.8b_normal.safetensors"),
             qPrintable(describe(r)));
    QVERIFY(!QFile::exists(part));
    QVERIFY(!QFile::exists(root.path() + "/normal/sapiens2_0.8b_normal.safetensors"));
  }

  void downloadFromALyingServerFailsClearly() {
    if (!sapiens::downloadSupported()) QSKIP("built without libcurl");
    LocalHttpServer server;
    LocalHttpServer::File file{readAll(QString::fromStdString(fixture("golden/pose/model.safetensors")))};
    file.lengthDelta = 4096;
    server.serve("/facebook/sapiens2-pose-1b/resolve/main/sapiens2_1b_pose.safetensors", file);
    QTemporaryDir root;
    const auto r = runCli({"models", "download", "pose-1b", "--root", root.path(), "--endpoint",
                           QString::fromStdString(server.base())},
                          60000, kNoProxy);
    QVERIFY2(r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("the server announced") && r.err.contains("but the connection ended after"),
             qPrintable(r.err));
    QVERIFY(!QFile::exists(root.path() + "/pose/sapiens2_1b_pose.safetensors"));
  }
};

QTEST_GUILESS_MAIN(CliModelsTest)
#include "test_cli_models.moc"
