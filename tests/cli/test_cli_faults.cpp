// Faults and hostile inputs through the real binary: a FIFO where a checkpoint should be, SIGTERM in
// the middle of a run, OpenCV's temporary files kept out of the system's temp folder.

#include "crossing_video.h"
#include "test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <opencv2/imgcodecs.hpp>

#include <sys/stat.h>

#include <functional>

using sapiens::test::describe;
using sapiens::test::fixture;
using sapiens::test::readJson;
using sapiens::test::resource;
using sapiens::test::runCli;

namespace {

QString fixtureModel(const char* task) {
  return QString::fromStdString(fixture(std::string("golden/") + task + "/model.safetensors"));
}

QString samplePicture() {
  return QString::fromStdString(resource("samples/astronaut.png"));
}

QStringList filesUnder(const QString& folder) {
  QStringList names;
  QDirIterator it(folder, QDir::Files | QDir::Hidden | QDir::System, QDirIterator::Subdirectories);
  while (it.hasNext()) names << QDir(folder).relativeFilePath(it.next());
  return names;
}

bool makeFifo(const QString& path) {
  return ::mkfifo(QFile::encodeName(path).constData(), 0600) == 0;
}

// Starts `arguments`, waits until `started` says the work is under way, sends SIGTERM and waits for the
// end. Returns the exit code (-1 when it did not end by itself).
int terminateWhenUnderWay(const QStringList& arguments, const std::function<bool()>& started,
                          QString* errors) {
  QProcess process;
  process.start(QString::fromUtf8(SAPIENS_CLI_PATH), arguments);
  if (!process.waitForStarted()) return -1;
  QElapsedTimer waited;
  waited.start();
  while (process.state() == QProcess::Running && !started() && waited.elapsed() < 240000)
    process.waitForFinished(20);
  if (process.state() != QProcess::Running) {
    *errors = "the run ended before it was under way: " + QString::fromUtf8(process.readAllStandardError());
    return -1;
  }
  process.terminate();  // SIGTERM
  const bool ended = process.waitForFinished(120000);
  *errors = QString::fromUtf8(process.readAllStandardError());
  if (!ended) {
    process.kill();
    process.waitForFinished();
    return -1;
  }
  return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
}

}  // namespace

class CliFaultsTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Opening a FIFO for reading waits for a writer: the model must be refused before that, at once.
  void aFifoGivenAsTheModelIsRefused() {
    QTemporaryDir dir;
    const QString fifo = dir.filePath("model.safetensors");
    QVERIFY(makeFifo(fifo));
    auto r = runCli({"inspect", "--model", fifo}, 30000);
    QVERIFY2(!r.crashed && r.exitCode != 0, qPrintable(describe(r)));
    QVERIFY2(r.err.contains(fifo) && r.err.contains("is a FIFO, not a regular file"), qPrintable(r.err));

    r = runCli({"run", samplePicture(), "--output", dir.filePath("out"), "--task", "seg", "--device", "cpu",
                "--seg-model", fifo},
               30000);
    QVERIFY2(!r.crashed && r.exitCode != 0, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("is a FIFO, not a regular file"), qPrintable(r.err));

    // models verify: a FIFO where a checkpoint goes is an invalid checkpoint, not an absent one.
    const QString root = dir.filePath("zoo");
    QVERIFY(QDir().mkpath(root + "/seg"));
    QVERIFY(makeFifo(root + "/seg/sapiens2_0.4b_seg.safetensors"));
    r = runCli({"models", "verify", "--root", root}, 30000);
    QVERIFY2(!r.crashed && r.exitCode == 1, qPrintable(describe(r)));
    QVERIFY2(r.out.contains("0 valid, 1 invalid") && r.err.contains("not a regular file"),
             qPrintable(describe(r)));
    r = runCli({"models", "list", "--root", root}, 30000);
    QVERIFY2(r.exitCode == 0 && r.out.contains(QRegularExpression("seg-0\\.4b\\s+invalid")),
             qPrintable(describe(r)));
  }

  // SIGTERM (kill, systemd, Slurm, Kubernetes) stops a folder run as Ctrl+C does: a valid manifest that
  // says it was cancelled, the pictures done listed, no temporary file left.
  void sigtermStopsAFolderRunCleanly() {
    QTemporaryDir dir;
    const QString pictures = dir.filePath("pictures"), out = dir.filePath("out");
    QVERIFY(QDir().mkpath(pictures));
    const cv::Mat sample = cv::imread(resource("samples/astronaut.png"), cv::IMREAD_COLOR);
    constexpr int kPictures = 12;
    for (int i = 0; i < kPictures; ++i)
      QVERIFY(
          cv::imwrite(QString("%1/p%2.png").arg(pictures).arg(i, 2, 10, QChar('0')).toStdString(), sample));
    QString errors;
    const int code = terminateWhenUnderWay(
        {"run", pictures, "--output", out, "--task", "seg", "--device", "cpu", "--seg-model",
         fixtureModel("seg")},
        [&] { return QFile::exists(out + "/p00.seg.png"); }, &errors);
    QVERIFY2(code > 0, qPrintable(QString("exit %1: %2").arg(code).arg(errors)));
    const QJsonObject manifest = readJson(out + "/results.json");
    QVERIFY2(!manifest.isEmpty(), qPrintable(errors));
    QVERIFY(manifest["cancelled"].toBool());
    QVERIFY(manifest["succeeded"].toInt() >= 1);
    QVERIFY(manifest["succeeded"].toInt() < kPictures);
    for (const QString& name : filesUnder(out)) QVERIFY2(!name.contains(".tmp-"), qPrintable(name));
  }

  void sigtermStopsAVideoRunCleanly() {
    QTemporaryDir dir;
    const QString video = QString::fromStdString(sapiens::test::writeCrossingVideo(dir.path().toStdString()));
    const QString out = dir.filePath("out");
    QString errors;
    const int code = terminateWhenUnderWay(
        {"run", video, "--output", out, "--task", "seg", "--device", "cpu", "--seg-model",
         fixtureModel("seg")},
        [&] { return filesUnder(out).size() > 6; }, &errors);
    QVERIFY2(code > 0, qPrintable(QString("exit %1: %2").arg(code).arg(errors)));
    const QJsonObject manifest = readJson(out + "/results.json");
    QVERIFY2(!manifest.isEmpty(), qPrintable(errors));
    QVERIFY(manifest["cancelled"].toBool());
    for (const QString& name : filesUnder(out)) QVERIFY2(!name.contains(".tmp-"), qPrintable(name));
  }

  // OpenCV encodes OpenEXR in memory through a file in the system's temp folder; our EXR files are
  // written inside the output folder only. The private temp folder here cannot even be written.
  void exrIsWrittenWithoutTheSystemTempFolder() {
    QTemporaryDir dir;
    const QString temp = dir.filePath("tmp"), out = dir.filePath("out");
    QVERIFY(QDir().mkpath(temp));
    QVERIFY(QFile::setPermissions(temp, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
    const auto r = runCli({"run", samplePicture(), "--output", out, "--task", "pointmap", "--device", "cpu",
                           "--pointmap-model", fixtureModel("pointmap")},
                          300000, {"TMPDIR=" + temp, "OPENCV_TEMP_PATH=" + temp});
    QFile::setPermissions(temp, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY(filesUnder(temp).isEmpty());
    QFile exr(out + "/astronaut.pointmap.exr");
    QVERIFY(exr.open(QIODevice::ReadOnly));
    QVERIFY(exr.size() > 1000);
    QCOMPARE(exr.read(4), QByteArray("\x76\x2f\x31\x01", 4));  // OpenEXR's magic number
    for (const QString& name : filesUnder(out)) QVERIFY2(!name.contains(".tmp-"), qPrintable(name));
  }
};

QTEST_APPLESS_MAIN(CliFaultsTest)
#include "test_cli_faults.moc"
