// Faults and hostile inputs through the real binary: a FIFO where a checkpoint should be, a checkpoint
// whose forward overflows, a task that fails on a picture beside others that work, SIGTERM in the middle
// of a run, OpenCV's temporary files kept out of the system's temp folder, a picture of 256 million pixels.

#include "crossing_video.h"
#include "export/png_by_rows.h"
#include "test_support.h"

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtEndian>
#include <QtTest>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <sys/stat.h>

#include <cstring>
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

// A copy of the fixture `task` model with `count` values of `key` (F32) set to `value`: finite weights so
// large that the forward overflows.
QString withHugeWeights(const char* task, const QString& key, int count, float value, const QString& path) {
  QFile in(fixtureModel(task));
  if (!in.open(QIODevice::ReadOnly)) return {};
  QByteArray bytes = in.readAll();
  quint64 headerSize = 0;
  std::memcpy(&headerSize, bytes.constData(), sizeof headerSize);
  const QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, static_cast<int>(headerSize))).object();
  const QJsonArray offsets = header[key].toObject()["data_offsets"].toArray();
  if (offsets.size() != 2) return {};
  const qint64 begin = 8 + static_cast<qint64>(headerSize) + offsets[0].toInteger();
  const qint64 end = 8 + static_cast<qint64>(headerSize) + offsets[1].toInteger();
  for (qint64 at = begin; at < end && at < begin + count * 4; at += 4)
    std::memcpy(bytes.data() + at, &value, 4);
  QFile out(path);
  if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size()) return {};
  return path;
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

  // The pointmap fixture's scale branch only takes its native input size: at 512x384 it fails on the
  // picture, and the segmentation of that picture must still be written and listed.
  void aTaskThatFailsOnAPictureLeavesTheOtherTasksResults() {
    QTemporaryDir dir;
    const QString out = dir.filePath("out");
    const auto r = runCli({"run", samplePicture(), "--output", out, "--task", "seg,pointmap", "--device",
                           "cpu", "--seg-model", fixtureModel("seg"), "--pointmap-model",
                           fixtureModel("pointmap"), "--input-size", "512x384"});
    QVERIFY2(!r.crashed && r.exitCode == 3, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("task failed: pointmap on") && r.err.contains("scale branch"), qPrintable(r.err));
    QVERIFY2(r.out.contains("1 of 1 picture(s) done (1 with a task failed)"), qPrintable(r.out));
    QVERIFY(QFile::exists(out + "/astronaut.seg.png"));
    QVERIFY(QFile::exists(out + "/astronaut.seg_overlay.png"));
    QVERIFY(!QFile::exists(out + "/astronaut.pointmap.npy") && !QFile::exists(out + "/astronaut.ply"));
    const QJsonObject manifest = readJson(out + "/results.json");
    QCOMPARE(manifest["partial"].toInt(), 1);
    QCOMPARE(manifest["failed"].toInt(), 0);
    const QJsonObject entry = manifest["inputs"].toArray().at(0).toObject();
    QCOMPARE(entry["status"].toString(), QString("partial"));
    QVERIFY(entry["task_errors"].toObject()["pointmap"].toString().contains("scale branch"));
    QVERIFY(!entry["task_errors"].toObject().contains("seg"));
    QVERIFY(entry["outputs"].toObject().contains("seg") && !entry["outputs"].toObject().contains("ply"));

    // With pointmap alone the picture has nothing to show: it fails, as a bad picture does.
    const auto alone =
        runCli({"run", samplePicture(), "--output", dir.filePath("alone"), "--task", "pointmap", "--device",
                "cpu", "--pointmap-model", fixtureModel("pointmap"), "--input-size", "512x384"});
    QVERIFY2(!alone.crashed && alone.exitCode == 1, qPrintable(describe(alone)));
    QVERIFY2(alone.err.contains("failed: ") && alone.err.contains("scale branch"), qPrintable(alone.err));
  }

  // Finite weights of 3e38 (a whole convolution of the normal head, before its last InstanceNorm) overflow
  // the forward, and the norm spreads the overflow over every pixel: the run must say so, and a map with
  // no valid pixel is the task's failure, not an all-zero success.
  void nonFiniteOutputsAreReportedAndAnAllInvalidMapFailsItsTask() {
    QTemporaryDir dir;
    const QString huge = withHugeWeights("normal", "decode_head.conv_layers.6.weight", 576, 3e38f,
                                         dir.filePath("huge_normal.safetensors"));
    QVERIFY(!huge.isEmpty());
    const QString out = dir.filePath("out");
    auto r = runCli({"run", samplePicture(), "--output", out, "--task", "seg,normal", "--device", "cpu",
                     "--dtype", "fp32", "--seg-model", fixtureModel("seg"), "--normal-model", huge});
    QVERIFY2(!r.crashed && r.exitCode == 3, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("task failed: normal on") && r.err.contains("NaN or infinite"),
             qPrintable(r.err));
    QVERIFY(QFile::exists(out + "/astronaut.seg.png"));
    QVERIFY(!QFile::exists(out + "/astronaut.normal.png") && !QFile::exists(out + "/astronaut.normal.npy"));
    QJsonObject entry = readJson(out + "/results.json")["inputs"].toArray().at(0).toObject();
    QCOMPARE(entry["status"].toString(), QString("partial"));
    QVERIFY(!entry["task_errors"].toObject()["normal"].toString().isEmpty());
    QVERIFY(entry["non_finite_values"].toObject()["normal"].toInteger() > 0);

    // One huge weight overflows only where its feature is large: a warning with the count, the map kept.
    const QString some = withHugeWeights("normal", "decode_head.conv_normal.weight", 1, 3e38f,
                                         dir.filePath("some_normal.safetensors"));
    const QString out2 = dir.filePath("out2");
    r = runCli({"run", samplePicture(), "--output", out2, "--task", "normal", "--device", "cpu", "--dtype",
                "fp32", "--normal-model", some});
    QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("warning: ") && r.err.contains("NaN or infinite values"), qPrintable(r.err));
    entry = readJson(out2 + "/results.json")["inputs"].toArray().at(0).toObject();
    QCOMPARE(entry["status"].toString(), QString("ok"));
    QVERIFY(entry["warnings"].toObject()["normal"].toString().contains("left invalid"));
    const qint64 count = entry["non_finite_values"].toObject()["normal"].toInteger();
    QVERIFY2(count > 0, qPrintable(QString::number(count)));
    QVERIFY(QFile::exists(out2 + "/astronaut.normal.png"));
  }

  // A pose head whose first two keypoints' weights are 3e38 overflows: NaN and infinite heatmaps, keypoints
  // decoded from them with scores above the threshold, and the tracker pairing people on those numbers
  // (once a hang). The run must end, say so, and write files a JSON reader parses.
  void anOverflowingPoseModelOnATrackedVideoEndsAndSaysSo() {
    QTemporaryDir dir;
    const std::string folder = dir.path().toStdString();
    const QString video = QString::fromStdString(sapiens::test::writeCrossingVideo(folder));
    const QString boxes = QString::fromStdString(sapiens::test::writeCrossingBoxes(folder));
    const QString huge = withHugeWeights("pose", "decode_head.conv_pose.weight", 32, 3e38f,
                                         dir.filePath("huge_pose.safetensors"));
    QVERIFY(!huge.isEmpty());
    const QString out = dir.filePath("out");
    QElapsedTimer timer;
    timer.start();
    const auto r = runCli({"run", video, "--output", out, "--task", "pose", "--device", "cpu", "--dtype",
                           "fp32", "--input-size", "128x96", "--bbox-file", boxes, "--pose-model", huge},
                          60000);
    QVERIFY2(!r.crashed && timer.elapsed() < 60000, qPrintable(describe(r)));
    QVERIFY2(r.exitCode == 0 || r.exitCode == 3, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("NaN or infinite"), qPrintable(r.err));
    const QJsonObject manifest = readJson(out + "/results.json");
    QVERIFY2(manifest["warnings"].toObject().contains("pose") ||
                 manifest["task_failures"].toObject().contains("pose"),
             qPrintable(QJsonDocument(manifest).toJson()));
    const QJsonArray frames = readJson(out + "/crossing.pose.json")["frames"].toArray();
    QCOMPARE(frames.size(), sapiens::test::CrossingScene::kFrames);
  }

  // A video whose frame size changes mid-stream (two MPEG-TS streams of 320x240 and 160x120 joined, as
  // ffmpeg's concat or a camera's resolution switch makes them) once stopped at the join with "truncated
  // or corrupt", dropping the frames decoded before it. Every frame is processed, at the first size.
  void aVideoWhoseFrameSizeChangesIsReadToTheEnd() {
    QTemporaryDir dir;
    QByteArray joined;
    for (const char* size : {"320x240", "160x120"}) {
      const QString part = dir.filePath(QString("part-%1.ts").arg(size));
      QProcess ffmpeg;
      ffmpeg.start("ffmpeg",
                   {"-loglevel", "error", "-f", "lavfi", "-i", QString("testsrc=size=%1:rate=10").arg(size),
                    "-frames:v", "8", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-f", "mpegts", part});
      if (!ffmpeg.waitForStarted()) QSKIP("no ffmpeg here to make the video");
      QVERIFY(ffmpeg.waitForFinished(60000) && ffmpeg.exitCode() == 0);
      QFile file(part);
      QVERIFY(file.open(QIODevice::ReadOnly));
      joined += file.readAll();
    }
    const QString video = dir.filePath("joined.ts");
    QFile out(video);
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(joined) == joined.size());
    out.close();
    const QString folder = dir.filePath("out");
    const auto r =
        runCli({"run", video, "--output", folder, "--task", "seg", "--device", "cpu", "--seg-model",
                fixtureModel("seg"), "--input-size", "64x48", "--video-out", dir.filePath("annotated.mp4")});
    QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("frame size changes from 320x240 to 160x120"), qPrintable(r.err));
    QVERIFY2(r.err.contains("timestamps go back at frame 8"), qPrintable(r.err));  // each part from zero
    QCOMPARE(readJson(folder + "/results.json")["frames"].toObject()["processed"].toInt(), 16);
    const QStringList masks =
        QDir(folder + "/joined_frames").entryList({"*.seg.png"}, QDir::Files, QDir::Name);
    QCOMPARE(masks.size(), 16);
    for (const QString& mask : masks) {
      const cv::Mat labels =
          cv::imread((folder + "/joined_frames/" + mask).toStdString(), cv::IMREAD_UNCHANGED);
      QVERIFY2(labels.cols == 320 && labels.rows == 240, qPrintable(mask));
    }
  }

  // A full disk while a picture's files are written: the picture fails, the files already written for it
  // are removed (a full disk gets their space back), and the folder holds only what results.json lists.
  // The disk is a 2 MB tmpfs mounted in a private user and mount namespace, where the machine allows one.
  void aFullDiskLeavesNoFileTheManifestDoesNotList() {
    QTemporaryDir dir;
    const QString pictures = dir.filePath("pictures"), out = dir.filePath("out"), kept = dir.filePath("kept");
    QVERIFY(QDir().mkpath(pictures) && QDir().mkpath(out) && QDir().mkpath(kept));
    const cv::Mat sample = cv::imread(resource("samples/astronaut.png"), cv::IMREAD_COLOR);
    QVERIFY(cv::imwrite((pictures + "/astronaut.png").toStdString(), sample));  // normal.npy: 3 MB
    cv::Mat small;
    cv::resize(sample, small, cv::Size(64, 48), 0, 0, cv::INTER_AREA);
    QVERIFY(cv::imwrite((pictures + "/small.png").toStdString(), small));  // all its files: < 100 KB
    const QString script =
        "mount -t tmpfs -o size=2m tmpfs \"$1\" || exit 97; shift; out=\"$1\"; kept=\"$2\"; shift 2; "
        "\"$@\"; code=$?; cp -a \"$out/.\" \"$kept/\"; exit $code";
    QProcess process;
    process.start("unshare", {"-rm",
                              "sh",
                              "-c",
                              script,
                              "sh",
                              out,
                              out,
                              kept,
                              QString::fromUtf8(SAPIENS_CLI_PATH),
                              "run",
                              pictures,
                              "--output",
                              out,
                              "--task",
                              "seg,normal",
                              "--device",
                              "cpu",
                              "--seg-model",
                              fixtureModel("seg"),
                              "--normal-model",
                              fixtureModel("normal")});
    if (!process.waitForStarted()) QSKIP("no unshare here: cannot make a small disk");
    QVERIFY(process.waitForFinished(600000));
    const QString errors = QString::fromUtf8(process.readAllStandardError());
    if (process.exitCode() == 97 || (process.exitCode() != 0 && errors.contains("unshare: ")))
      QSKIP(qPrintable("cannot mount a small tmpfs here: " + errors.trimmed()));
    QVERIFY2(process.exitStatus() == QProcess::NormalExit && process.exitCode() == 3, qPrintable(errors));
    QVERIFY2(errors.contains("astronaut.png") && errors.contains("already written for it were removed"),
             qPrintable(errors));

    const QJsonObject manifest = readJson(kept + "/results.json");
    QVERIFY2(!manifest.isEmpty(), qPrintable(errors));
    QCOMPARE(manifest["succeeded"].toInt(), 1);
    QCOMPARE(manifest["failed"].toInt(), 1);
    QSet<QString> listed{"results.json"};
    for (const QJsonValue& input : manifest["inputs"].toArray()) {
      const QJsonObject entry = input.toObject();
      const bool isSmall = entry["input"].toString().endsWith("small.png");
      QCOMPARE(entry["status"].toString(), QString(isSmall ? "ok" : "failed"));
      if (!isSmall) QVERIFY(entry["error"].toString().contains("normal.npy"));
      for (const QJsonValue& path : entry["outputs"].toObject())
        listed.insert(QDir(out).relativeFilePath(path.toString()));
    }
    const QStringList present = filesUnder(kept);
    QVERIFY2(present.contains("small.seg.png") && present.contains("small.normal.npy"),
             qPrintable(present.join(", ")));
    for (const QString& name : present)
      QVERIFY2(listed.contains(name), qPrintable(name + " is in the folder but not in results.json"));
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
  void aHugePictureRunsWithinTwoGigabytes() {
    // 16000 x 16000 (under the pixel limit, well under 1 MB as a PNG), seg then pose in the person box
    // the seg mask gives: the picture itself is 768 MB in memory and its label map 256 MB; the seg
    // overlay is written a band of rows at a time and the pose overlay drawn on the picture itself (3.1 GB
    // peak when both overlays were made on full-size copies; the box's closing on the full mask took
    // minutes).
    QTemporaryDir dir;
    const QString picture = dir.filePath("huge.png"), out = dir.filePath("out");
    constexpr int kSide = 16000;
    sapiens::detail::writePngByRows(picture.toStdString(), kSide, kSide, 3, [](int first, cv::Mat& band) {
      for (int r = 0; r < band.rows; ++r)
        band.row(r).setTo((first + r) / 1000 % 2 ? cv::Scalar(160, 90, 40) : cv::Scalar(150, 180, 200));
    });
    QVERIFY(QFileInfo(picture).size() < (1 << 20));
    const auto r =
        runCli({"run", picture, "--output", out, "--task", "seg,pose", "--device", "cpu", "--dtype", "fp32",
                "--seg-model", fixtureModel("seg"), "--pose-model", fixtureModel("pose")},
               600000);
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    const QJsonObject manifest = readJson(out + "/results.json");
    const double peakMb = manifest["peak_rss_mb"].toDouble();
    QVERIFY2(peakMb > 1024 && peakMb < 2000, qPrintable(QString("peak resident set %1 MB").arg(peakMb)));
    for (const char* name : {"/huge.seg.png", "/huge.seg_overlay.png", "/huge.pose_overlay.png"}) {
      QFile png(out + name);
      QVERIFY2(png.open(QIODevice::ReadOnly), name);
      const QByteArray header = png.read(24);  // signature, IHDR length and type, width, height
      QCOMPARE(header.mid(12, 4), QByteArray("IHDR"));
      QCOMPARE(qFromBigEndian<quint32>(header.constData() + 16), quint32(kSide));
      QCOMPARE(qFromBigEndian<quint32>(header.constData() + 20), quint32(kSide));
    }
  }

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
