// `sapiens-cli run` without any checkpoint falls back to the untrained demo weights, says so on stderr
// and records it in results.json; a real checkpoint present for a task is used for that task; a named
// model folder or --no-demo-weights turns the fallback off.

#include "png_chunks.h"
#include "test_support.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using sapiens::test::fixture;
using sapiens::test::resource;
using sapiens::test::runCli;

using sapiens::test::describe;
using sapiens::test::readJson;

namespace {

// The text of the PNG's "Comment" tEXt chunk ("" when it has none), walking the chunks and checking each
// one's CRC; a broken file fails the test.
QString pngComment(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return QStringLiteral("<cannot open %1>").arg(path);
  const QByteArray png = file.readAll();
  if (!png.startsWith("\x89PNG\r\n\x1a\n")) return QStringLiteral("<not a PNG>");
  QString comment;
  for (qsizetype at = 8; at + 12 <= png.size();) {
    const quint32 length = sapiens::test::png::readBigEndian32(png, at);
    if (at + 12 + qsizetype(length) > png.size()) return QStringLiteral("<chunk past the end>");
    const QByteArray typeAndData = png.mid(at + 4, 4 + length);
    if (sapiens::test::png::crc32(typeAndData) != sapiens::test::png::readBigEndian32(png, at + 8 + length))
      return QStringLiteral("<bad CRC>");
    if (typeAndData.startsWith("tEXtComment")) comment = QString::fromLatin1(typeAndData.mid(4 + 8));
    if (typeAndData.startsWith("IEND")) return comment;
    at += 12 + length;
  }
  return QStringLiteral("<no IEND>");
}

// No checkpoint anywhere: an empty checkpoint root, and HOME (~/sapiens2_host) and the user data folder
// in an empty temporary folder too. SAPIENS_DEMO_WEIGHTS_DIR="" means unset.
QStringList emptyMachine(const QTemporaryDir& home) {
  QDir(home.path()).mkpath("checkpoints");
  return {"SAPIENS_CHECKPOINT_ROOT=" + home.path() + "/checkpoints", "HOME=" + home.path(),
          "XDG_DATA_HOME=" + home.path() + "/data", "SAPIENS_DEMO_WEIGHTS_DIR="};
}

QStringList runArgs(const QString& output, const QString& tasks) {
  return {"run",      QString::fromStdString(resource("samples/astronaut.png")),
          "--task",   tasks,
          "--output", output,
          "--device", "cpu"};
}

}  // namespace

class CliDemoWeightsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void noCheckpointRunsEveryTaskOnTheDemoWeights() {
    QTemporaryDir home, out;
    QElapsedTimer timer;
    timer.start();
    const auto r = runCli(runArgs(out.path(), "pose,seg,normal,albedo,pointmap"), 300000, emptyMachine(home));
    qInfo("all five tasks on the demo weights: %.1f s", timer.elapsed() / 1000.0);
    QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(describe(r)));

    // stderr says so, once per task at load time and in the closing banner.
    QVERIFY2(r.err.contains("NOTE: seg, pose, normal, albedo, pointmap ran on UNTRAINED demo weights"),
             qPrintable(r.err));
    for (const char* task : {"pose", "seg", "normal", "albedo", "pointmap"})
      QVERIFY2(r.err.contains(QString("no %1 checkpoint found under %2/checkpoints").arg(task, home.path())),
               qPrintable(r.err));

    const QJsonObject manifest = readJson(out.path() + "/results.json");
    QCOMPARE(manifest["succeeded"].toInt(), 1);
    QCOMPARE(manifest["demo_weights"].toBool(), true);
    QVERIFY(manifest["demo_weights_notice"].toString().contains("UNTRAINED"));
    QVERIFY(manifest["task_errors"].toArray().isEmpty());
    const QJsonArray models = manifest["models"].toArray();
    QCOMPARE(models.size(), 5);
    for (const auto& value : models) {
      const QJsonObject m = value.toObject();
      QVERIFY2(m["demo_weights"].toBool(), qPrintable(m["task"].toString()));
      QVERIFY(m["path"].toString().endsWith("/sapiens2_demo_" + m["task"].toString() + ".safetensors"));
      QCOMPARE(m["architecture"].toString(), QString("custom"));
    }

    // Every task's outputs exist.
    const QJsonObject outputs = manifest["inputs"].toArray()[0].toObject()["outputs"].toObject();
    for (const char* kind : {"seg", "seg_overlay", "pose", "pose_overlay", "normal", "normal_npy", "albedo",
                             "albedo_npy", "pointmap_npy", "depth", "ply"}) {
      QVERIFY2(outputs.contains(kind), kind);
      QVERIFY2(QFile::exists(outputs[kind].toString()), kind);
      QVERIFY2(QFile(outputs[kind].toString()).size() > 0, kind);
    }
    // Each file that has room for it says where it came from: PNG text chunk, PLY comment, JSON note.
    for (const char* kind : {"seg", "seg_overlay", "pose_overlay", "normal", "albedo", "depth"}) {
      const QString note = pngComment(outputs[kind].toString());
      QVERIFY2(note.startsWith("UNTRAINED demo weights"), qPrintable(QString("%1: '%2'").arg(kind, note)));
    }
    QFile ply(outputs["ply"].toString());
    QVERIFY(ply.open(QIODevice::ReadOnly));
    const QByteArray plyHeader = ply.read(1024);
    QVERIFY2(plyHeader.contains("\ncomment UNTRAINED demo weights"), plyHeader.constData());
    QVERIFY(plyHeader.indexOf("comment UNTRAINED") < plyHeader.indexOf("end_header"));
    QVERIFY(readJson(outputs["pose"].toString())["note"].toString().startsWith("UNTRAINED demo weights"));
    // Nothing was written into the (empty) checkpoint root.
    QVERIFY(QDir(home.path() + "/checkpoints").isEmpty());
  }

  void aRealCheckpointIsUsedForItsTaskAndTheDemoForTheOthers() {
    QTemporaryDir home, out;
    const QStringList env = emptyMachine(home);
    // A (tiny, golden) checkpoint in the official layout stands for a downloaded one.
    QDir(home.path()).mkpath("checkpoints/seg");
    QVERIFY(QFile::copy(QString::fromStdString(fixture("golden/seg/model.safetensors")),
                        home.path() + "/checkpoints/seg/sapiens2_0.4b_seg.safetensors"));
    const auto r = runCli(runArgs(out.path(), "seg,albedo"), 300000, env);
    QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("NOTE: albedo ran on UNTRAINED demo weights"), qPrintable(r.err));
    QVERIFY2(!r.err.contains("no seg checkpoint found"), qPrintable(r.err));

    const QJsonObject manifest = readJson(out.path() + "/results.json");
    QCOMPARE(manifest["demo_weights"].toBool(), true);
    for (const auto& value : manifest["models"].toArray()) {
      const QJsonObject m = value.toObject();
      QCOMPARE(m["demo_weights"].toBool(), m["task"].toString() == "albedo");
    }
    // Only the demo task's files carry the notice.
    QVERIFY(pngComment(out.path() + "/astronaut.albedo.png").startsWith("UNTRAINED demo weights"));
    QCOMPARE(pngComment(out.path() + "/astronaut.seg.png"), QString());
  }

  void aNamedModelFolderOrNoDemoWeightsFailsInstead() {
    QTemporaryDir home, out;
    const QStringList env = emptyMachine(home);
    auto r = runCli(runArgs(out.path(), "normal") + QStringList{"--no-demo-weights"}, 60000, env);
    QVERIFY2(!r.crashed && r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("no normal checkpoint found under " + home.path() + "/checkpoints"),
             qPrintable(r.err));
    QVERIFY(!r.err.contains("demo weights"));

    r = runCli(runArgs(out.path(), "normal") + QStringList{"--model-dir", home.path() + "/checkpoints"},
               60000, env);
    QVERIFY2(!r.crashed && r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("no normal checkpoint found"), qPrintable(r.err));
    QVERIFY(!QFile::exists(out.path() + "/astronaut.normal.png"));
  }
};

QTEST_GUILESS_MAIN(CliDemoWeightsTest)
#include "test_cli_demo_weights.moc"
