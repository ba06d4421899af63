// `sapiens-cli run` over hostile media (tests/support/hostile_media.h, generated at test time): in one batch
// the bad pictures are named and skipped, every other one is processed upright, results.json records each
// failure with its reason and the exit code (3) says some failed; a broken video fails with its name.
// Never a crash.

#include "hostile_media.h"
#include "test_support.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

using sapiens::test::fixture;
using sapiens::test::resource;
using sapiens::test::runCli;

using sapiens::test::readJson;

namespace {

QString stemOf(const QString& name) {
  return name.left(name.lastIndexOf('.'));
}

QStringList segRun(const QString& input, const QString& output) {
  return {"run",         input,
          "--output",    output,
          "--task",      "seg",
          "--device",    "cpu",
          "--seg-model", QString::fromStdString(fixture("golden/seg/model.safetensors"))};
}

}  // namespace

class CliHostileMediaTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aHostileBatchCompletesAndSaysSomeFailed() {
    QTemporaryDir in, out;
    const auto corpus = sapiens::test::writeHostileImages(in.path());
    QVERIFY(!corpus.empty());
    QVERIFY(QFile::copy(QString::fromStdString(resource("samples/astronaut.png")), in.path() + "/good.png"));
    int refused = 0;
    for (const auto& item : corpus) refused += item.decodes ? 0 : 1;

    const auto r = runCli(segRun(in.path(), out.path()));
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QVERIFY2(r.exitCode == 3, qPrintable(QString("exit %1: %2").arg(r.exitCode).arg(r.err)));

    const QJsonObject manifest = readJson(out.path() + "/results.json");
    QCOMPARE(manifest["failed"].toInt(), refused);
    QCOMPARE(manifest["succeeded"].toInt(), int(corpus.size()) + 1 - refused);
    QMap<QString, QJsonObject> entries;
    for (const auto& value : manifest["inputs"].toArray()) {
      const QJsonObject entry = value.toObject();
      entries.insert(entry["input"].toString().section('/', -1), entry);
    }
    QVERIFY(QFile::exists(out.path() + "/good.seg.png"));
    for (const auto& item : corpus) {
      QVERIFY2(entries.contains(item.name), qPrintable(item.name + " missing from results.json"));
      const QJsonObject entry = entries[item.name];
      const QString mask = out.path() + "/" + stemOf(item.name) + ".seg.png";
      if (item.decodes) {
        QCOMPARE(entry["status"].toString(), QString("ok"));
        const cv::Mat labels = cv::imread(mask.toStdString(), cv::IMREAD_UNCHANGED);
        QVERIFY2(!labels.empty(), qPrintable(mask));
        QVERIFY2(labels.cols == item.width && labels.rows == item.height,
                 qPrintable(item.name + QString(": mask %1x%2").arg(labels.cols).arg(labels.rows)));
      } else {
        QCOMPARE(entry["status"].toString(), QString("failed"));
        QVERIFY2(
            entry["error"].toString().contains(item.name) && entry["error"].toString().contains(item.reason),
            qPrintable(entry["error"].toString()));
        QVERIFY2(r.err.contains(item.name), qPrintable(item.name + " not named on stderr: " + r.err));
        QVERIFY2(!QFile::exists(mask), qPrintable(mask));
      }
    }
  }

  void aBrokenVideoFailsWithItsName_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("empty") << QStringLiteral("empty.mp4");
    QTest::newRow("cut") << QStringLiteral("cut.mp4");
    QTest::newRow("subtitles only") << QStringLiteral("subtitles.mkv");
  }

  void aBrokenVideoFailsWithItsName() {
    QFETCH(QString, name);
    QTemporaryDir in, out;
    const QString path = in.filePath(name);
    auto ffmpeg = [](const QStringList& arguments) {
      QProcess process;
      process.start("ffmpeg", QStringList{"-v", "error", "-y"} + arguments);
      return process.waitForFinished(60000) && process.exitStatus() == QProcess::NormalExit &&
             process.exitCode() == 0;
    };
    if (name == "empty.mp4") {
      QVERIFY(sapiens::test::hostile::writeFile(path, {}));
    } else if (name == "cut.mp4") {
      const QString source = in.filePath("source.mp4");
      QVERIFY(
          ffmpeg({"-f", "lavfi", "-i", "testsrc=size=96x64:rate=15", "-t", "2", "-c:v", "mpeg4", source}));
      QFile file(source);
      QVERIFY(file.open(QIODevice::ReadOnly));
      QVERIFY(sapiens::test::hostile::writeFile(path, file.read(file.size() * 4 / 10)));
    } else {
      const QString srt = in.filePath("subtitles.srt");
      QVERIFY(sapiens::test::hostile::writeFile(srt, "1\n00:00:00,000 --> 00:00:01,000\nHello\n\n"));
      QVERIFY(ffmpeg({"-i", srt, "-c:s", "srt", path}));
    }
    const auto r = runCli(segRun(path, out.path()));
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QVERIFY2(r.exitCode != 0, qPrintable(r.err));
    QVERIFY2(r.err.contains(name), qPrintable(r.err));
  }
};

QTEST_APPLESS_MAIN(CliHostileMediaTest)
#include "test_cli_hostile_media.moc"
