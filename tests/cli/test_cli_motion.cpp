// Motion per tracked person end to end: `run VIDEO --task pose,pointmap --motion` on a clip of the bundled
// sample moving across the frame and on two people crossing (one set of files per track), `sapiens-cli
// motion` over a run's STEM.pose.json, the TRC and MOT through the strict OpenSim-rules checker, the BVH
// through assimp, and each kind of bad input refused with its reason and no file.

#include "crossing_video.h"
#include "sapiens/media/video_writer.h"
#include "test_support.h"
#include "walking_video.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

using sapiens::test::fixture;
using sapiens::test::readJson;
using sapiens::test::resource;
using sapiens::test::runCli;
using sapiens::test::writeWalkingBoxes;
using sapiens::test::writeWalkingSample;

namespace {

constexpr int kFrames = 30;
const QStringList kTrackFiles = {".angles.csv", ".keypoints3d.csv", ".trc", ".mot", ".bvh", ".angles.png"};

QStringList models() {
  QStringList args{"--device", "cpu", "--input-size", "256x192", "--no-overlay"};
  for (const char* task : {"pose", "pointmap"})
    args << QString("--%1-model").arg(task)
         << QString::fromStdString(fixture(std::string("golden/") + task + "/model.safetensors"));
  return args;
}

QString python() {
  return QFileInfo::exists("/usr/bin/python3") ? QStringLiteral("/usr/bin/python3")
                                               : QStringLiteral("python3");
}

// The strict reader written from OpenSim's TRCFileAdapter and DelimFileAdapter rules.
void checkOpenSimFile(const QString& kind, const QString& path) {
  QProcess checker;
  checker.start(python(), {QString(SAPIENS_TEST_FIXTURES) + "/../motion/opensim_file_check.py", kind, path});
  QVERIFY(checker.waitForFinished(60000));
  QVERIFY2(checker.exitCode() == 0,
           qPrintable(checker.readAllStandardOutput() + checker.readAllStandardError()));
}

void checkBvhOpensInAssimp(const QString& path) {
  QProcess assimp;
  assimp.start("assimp", {"info", path});
  QVERIFY2(assimp.waitForFinished(60000),
           "assimp (assimp-utils, installed by scripts/install-deps) did not run");
  const QString out = assimp.readAllStandardOutput();
  QVERIFY2(assimp.exitCode() == 0 && out.contains("Animations:"),
           qPrintable(out + assimp.readAllStandardError()));
}

// Every file of the track, the OpenSim ones through the checker, and its summary in the manifest.
void checkTrackSet(const QString& stem, int track, const QJsonObject& summary) {
  const QString prefix = QString("%1.track%2").arg(stem).arg(track);
  for (const QString& suffix : kTrackFiles)
    QVERIFY2(QFile::exists(prefix + suffix), qPrintable(prefix + suffix));
  checkOpenSimFile("trc", prefix + ".trc");
  checkOpenSimFile("mot", prefix + ".mot");
  checkBvhOpensInAssimp(prefix + ".bvh");
  QFile csv(prefix + ".angles.csv");
  QVERIFY(csv.open(QIODevice::ReadOnly));
  const QString header = csv.readLine().trimmed();
  const QString firstAngle = summary["angle_ranges_deg"].toObject().keys().value(0);
  QVERIFY2(header.startsWith("time,frame,") && header.contains(firstAngle), qPrintable(header));
  QCOMPARE(summary["track_id"].toInt(), track);
  QVERIFY(summary["samples"].toInt() >= 16);
  QVERIFY(summary["duration_s"].toDouble() > 0.5);
  QVERIFY(summary["segments"].toObject()["count"].toInt() >= 1);
  QVERIFY(summary["angle_ranges_deg"].toObject().contains("right_knee.flexion"));
  QCOMPARE(summary["files"].toObject().size(), kTrackFiles.size());
}

QStringList filesIn(const QString& dir, const QString& pattern) {
  return QDir(dir).entryList({pattern}, QDir::Files);
}

}  // namespace

class CliMotionTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aWalkingPersonGetsOneSetOfMotionFiles() {
    QTemporaryDir dir;
    const QString out = dir.path() + "/out";
    auto r = runCli(QStringList{"run", writeWalkingSample(dir.path(), kFrames), "--task", "pose,pointmap",
                                "--motion", "--bbox-file", writeWalkingBoxes(dir.path(), kFrames), "--output",
                                out} +
                    models());
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    const QJsonObject motion = readJson(out + "/results.json")["motion"].toObject();
    const QJsonArray tracks = motion["tracks"].toArray();
    QCOMPARE(tracks.size(), 1);
    checkTrackSet(out + "/walk", 0, tracks[0].toObject());
    QCOMPARE(filesIn(out, "walk.track*").size(), kTrackFiles.size());

    // The same from the run's pose file alone: it carries times, track ids and 3-D keypoints.
    const QString again = dir.path() + "/again";
    r = runCli({"motion", out + "/walk.pose.json", "--output", again, "--cutoff", "5", "--max-gap", "4"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    const QJsonObject recorded = readJson(again + "/results.json")["motion"].toObject();
    QCOMPARE(recorded["options"].toObject()["cutoff_hz"].toDouble(), 5.0);
    checkTrackSet(again + "/walk", 0, recorded["tracks"].toArray()[0].toObject());
  }

  void twoPeopleGetASetEach() {
    using sapiens::test::CrossingScene;
    QTemporaryDir dir;
    const std::string folder = dir.path().toStdString();
    const QString video = QString::fromStdString(sapiens::test::writeCrossingVideo(folder));
    const QString boxes = QString::fromStdString(sapiens::test::writeCrossingBoxes(folder));
    const QString out = dir.path() + "/out";
    auto r = runCli(QStringList{"run", video, "--task", "pose,pointmap", "--motion", "--bbox-file", boxes,
                                "--angles", "left_knee.flexion,right_knee.flexion,trunk.flexion", "--output",
                                out} +
                    models());
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    const QJsonArray tracks = readJson(out + "/results.json")["motion"].toObject()["tracks"].toArray();
    QCOMPARE(tracks.size(), 2);
    for (int t = 0; t < 2; ++t) checkTrackSet(out + "/crossing", t, tracks[t].toObject());
    QCOMPARE(tracks[0].toObject()["angle_ranges_deg"].toObject().size(), 3);
    // B hides for 5 frames: filled (at most 10), so one segment each.
    QCOMPARE(tracks[1].toObject()["segments"].toObject()["count"].toInt(), 1);
  }

  void badInputIsRefusedWithItsReasonAndNoFile();
};

// A pose file without 3-D keypoints, a picture's pose file (no time), a single frame, a cutoff above
// Nyquist, an unknown angle and --motion without pointmap each give their reason; no track file appears.
void CliMotionTest::badInputIsRefusedWithItsReasonAndNoFile() {
  QTemporaryDir dir;
  const QString video = writeWalkingSample(dir.path(), kFrames);
  const QString flat = dir.path() + "/flat";
  auto r = runCli(QStringList{"run", video, "--task", "pose", "--output", flat} + models().mid(0, 7));
  QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
  const QString bad = dir.path() + "/bad";
  const auto refused = [&](const QStringList& args, const QString& reason, int code = 1) {
    auto result = runCli(args);
    QVERIFY2(result.exitCode == code && result.err.contains(reason), qPrintable(result.out + result.err));
    QVERIFY2(filesIn(bad, "*.track*").isEmpty(), qPrintable(filesIn(bad, "*.track*").join(", ")));
  };
  refused({"motion", flat + "/walk.pose.json", "--output", bad}, "no person has keypoints_3d");
  refused(QStringList{"run", video, "--task", "pose", "--motion", "--output", bad} + models(),
          "--task pose,pointmap", 2);

  const QString full = dir.path() + "/full";
  r = runCli(QStringList{"run", video, "--task", "pose,pointmap", "--output", full, "--max-frames", "1"} +
             models());
  QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
  refused({"motion", full + "/walk.pose.json", "--output", bad}, "not a single frame");
  r = runCli(QStringList{"run", video, "--task", "pose,pointmap", "--output", full} + models());
  QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
  refused({"motion", full + "/walk.pose.json", "--output", bad, "--cutoff", "13"}, "Nyquist");
  refused({"motion", full + "/walk.pose.json", "--output", bad, "--angles", "left_knee.bend"},
          "left_knee.flexion");

  const QString picture = dir.path() + "/picture";
  r = runCli(QStringList{"run", QString::fromStdString(resource("samples/astronaut.png")), "--task",
                         "pose,pointmap", "--output", picture} +
             models());
  QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
  refused({"motion", picture + "/astronaut.pose.json", "--output", bad}, "has no time");
}

QTEST_GUILESS_MAIN(CliMotionTest)
#include "test_cli_motion.moc"
