// `sapiens-cli run VIDEO`: a video this test encodes (frame numbers drawn into the pixels) through the
// fixture models; every output read back: the annotated video with libavformat (frames, timestamps), the
// per-video keypoints JSON, the per-frame files, the manifest.

#include "crossing_video.h"
#include "sapiens/media/frame_number_pattern.h"
#include "sapiens/media/video_file_source.h"
#include "sapiens/media/video_writer.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <filesystem>
#include <map>
#include <set>

using sapiens::test::fixture;
using sapiens::test::readJson;
using sapiens::test::resource;
using sapiens::test::runCli;

namespace {

constexpr double kFps = 25;

// The sample picture with the frame number in its top-left corner, `frames` frames at 25 fps.
QString writeVideo(const QTemporaryDir& dir, int frames, const char* name = "clip.mp4") {
  const std::string path = (dir.path() + "/" + name).toStdString();
  cv::Mat sample = cv::imread(resource("samples/astronaut.png"));
  cv::resize(sample, sample, cv::Size(192, 192), 0, 0, cv::INTER_AREA);
  sapiens::VideoWriterOptions options;
  options.width = sample.cols;
  options.height = sample.rows;
  options.fps = kFps;
  options.keyframeInterval = 5;
  sapiens::VideoWriter writer(path, options);
  for (int i = 0; i < frames; ++i) {
    cv::Mat frame = sample.clone();
    cv::Mat corner = frame(cv::Rect(0, 0, 48, 60));
    sapiens::drawFrameNumber(corner, i);
    writer.write(frame, i / kFps);
  }
  writer.finish();
  return QString::fromStdString(path);
}

// Each person's track id in `people` (an array of objects), in order; `key` holds it.
QList<int> trackIds(const QJsonArray& people, const char* key) {
  QList<int> ids;
  for (const QJsonValue& person : people) {
    const QJsonValue id = person.toObject()[key];
    ids << (id.isArray() ? id.toArray()[0].toInt(-1) : id.toInt(-1));  // OpenPose: "person_id": [id]
  }
  return ids;
}

// The converted layouts of every frame (STEM_frames/NNNNNN.pose.FORMAT.json) list the people of that
// frame of STEM.pose.json, in its order, with its track ids. At --kpt-thr 0 the face points without a
// Goliath counterpart (face_0, the jaw's first) are still absent and the face box does not reach (0, 0).
void checkConvertedFrames(const QString& framesDir, const QJsonArray& poses) {
  for (int i = 0; i < poses.size(); ++i) {
    const QString stem = framesDir + QStringLiteral("/%1").arg(i, 6, 10, QLatin1Char('0'));
    const QList<int> ids = trackIds(poses[i].toObject()["instances"].toArray(), "track_id");
    QVERIFY(!ids.isEmpty() && !ids.contains(-1));
    QCOMPARE(trackIds(readJson(stem + ".pose.coco17.json")["annotations"].toArray(), "track_id"), ids);
    QCOMPARE(trackIds(readJson(stem + ".pose.openpose.json")["people"].toArray(), "person_id"), ids);
    const QJsonArray whole = readJson(stem + ".pose.wholebody.json")["annotations"].toArray();
    QCOMPARE(trackIds(whole, "track_id"), ids);
    for (const QJsonValue& value : whole) {
      const QJsonObject person = value.toObject();
      const QJsonArray face = person["face_kpts"].toArray(), box = person["face_box"].toArray();
      QCOMPARE(face.size(), 3 * 68);
      QVERIFY2(face[0].toDouble() == 0 && face[1].toDouble() == 0 && face[2].toInt(-1) == 0,
               qPrintable(QStringLiteral("frame %1: face_0 is written as a labelled point").arg(i)));
      QVERIFY(person["face_valid"].toBool());
      QVERIFY2(box[0].toDouble() > 0 && box[1].toDouble() > 0,
               qPrintable(QStringLiteral("frame %1: the face box reaches the origin").arg(i)));
    }
  }
}

QStringList model(const char* task) {
  return {QString("--%1-model").arg(task),
          QString::fromStdString(fixture(std::string("golden/") + task + "/model.safetensors"))};
}

}  // namespace

class CliVideoTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Matting on a video: the alpha matte of every frame as a 16-bit PNG sequence (and .npy), the annotated
  // video showing the matting composite.
  void aMattingRunWritesAnAlphaSequence() {
    QTemporaryDir dir;
    const QString video = writeVideo(dir, 4);
    const QString out = dir.path() + "/out";
    auto r = runCli(QStringList{"run", video, "--task", "matting", "--device", "cpu", "--input-size",
                                "128x96", "--output", out} +
                    model("matting"));
    QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(r.out + r.err));
    for (const char* name : {"000000", "000001", "000002", "000003"}) {
      const cv::Mat alpha =
          cv::imread((out + "/clip_frames/" + name + ".alpha.png").toStdString(), cv::IMREAD_UNCHANGED);
      QVERIFY2(alpha.type() == CV_16UC1 && alpha.rows == 192 && alpha.cols == 192, name);
      QVERIFY2(QFile::exists(out + "/clip_frames/" + name + ".alpha.npy"), name);
    }
    sapiens::VideoFileSource annotated((out + "/clip.annotated.mp4").toStdString());
    int frames = 0;
    while (annotated.next()) ++frames;
    QCOMPARE(frames, 4);
  }

  void aVideoGivesAnAnnotatedVideoKeypointsAndFrames() {
    QTemporaryDir dir;
    const QString video = writeVideo(dir, 12);
    const QString out = dir.path() + "/out";
    auto r = runCli(QStringList{"run", video, "--task", "seg,pose", "--device", "cpu", "--input-size",
                                "128x96", "--frames", "2:10", "--every", "2", "--smooth", "--output", out} +
                    model("seg") + model("pose"));
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));

    // The annotated video: frames 2, 4, 6, 8 at their own times (the reader counts from the first).(the
    // reader counts from the first).
    sapiens::VideoFileSource annotated((out + "/clip.annotated.mp4").toStdString());
    std::vector<double> times;
    while (auto frame = annotated.next()) times.push_back(frame->timestampSeconds);
    QCOMPARE(times.size(), std::size_t{4});
    for (std::size_t i = 0; i < times.size(); ++i)
      QVERIFY(std::abs(times[i] - times[0] - 2.0 * i / kFps) < 1e-3);

    const QJsonObject pose = readJson(out + "/clip.pose.json");
    QCOMPARE(pose["video"].toString(), QString("clip.mp4"));
    QCOMPARE(pose["num_keypoints"].toInt(), 308);
    const QJsonArray frames = pose["frames"].toArray();
    QCOMPARE(frames.size(), 4);
    QCOMPARE(frames[0].toObject()["image_name"].toString(), QString("000002"));
    QCOMPARE(frames[3].toObject()["image_name"].toString(), QString("000008"));
    QCOMPARE(frames[1].toObject()["instances"].toArray()[0].toObject()["keypoints"].toArray().size(), 308);
    // Each frame's presentation time, so that the file alone tells the timing.
    for (int i = 0; i < 4; ++i)
      QVERIFY(std::abs(frames[i].toObject()["time"].toDouble(-1) - (2.0 + 2.0 * i) / kFps) < 1e-3);

    for (const char* name : {"000002", "000004", "000006", "000008"}) {
      const cv::Mat labels =
          cv::imread((out + "/clip_frames/" + name + ".seg.png").toStdString(), cv::IMREAD_UNCHANGED);
      QVERIFY2(labels.rows == 192 && labels.cols == 192, name);
    }
    QVERIFY(!QFile::exists(out + "/clip_frames/000003.seg.png"));

    const QJsonObject manifest = readJson(out + "/results.json");
    QCOMPARE(manifest["frames"].toObject()["processed"].toInt(), 4);
    QCOMPARE(manifest["smoothing"].toBool(), true);

    // Every person is tracked; results.json counts the tracks, which are numbered from 0.
    std::set<int> ids;
    for (const QJsonValue& frame : frames) {
      for (const QJsonValue& person : frame.toObject()["instances"].toArray()) {
        QVERIFY(person.toObject().contains("track_id"));
        ids.insert(person.toObject()["track_id"].toInt());
      }
    }
    QVERIFY(!ids.empty());
    QCOMPARE(manifest["tracks"].toInt(), static_cast<int>(ids.size()));
    QCOMPARE(*ids.rbegin(), static_cast<int>(ids.size()) - 1);
  }

  void pointmapFramesBecomeNumberedPlys() {
    QTemporaryDir dir;
    const QString video = writeVideo(dir, 3);
    const QString out = dir.path() + "/out";
    // The picture runs' PLY options hold for a video's frames too.
    auto r = runCli(QStringList{"run", video, "--task", "pointmap", "--device", "cpu", "--output", out,
                                "--ply", "ascii", "--ply-faces"} +
                    model("pointmap"));
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    for (const char* name : {"000000", "000001", "000002"}) {
      QFile ply(out + "/clip_frames/" + name + ".ply");
      QVERIFY2(ply.open(QIODevice::ReadOnly), name);
      const QByteArray header = ply.read(4096);
      QVERIFY2(header.contains("format ascii 1.0") && header.contains("element face"), header.constData());
      QVERIFY2(QFile::exists(out + "/clip_frames/" + name + ".depth.png"), name);
    }
  }

  void aTruncatedVideoKeepsWhatWasDone() {
    QTemporaryDir dir;
    const QString video = writeVideo(dir, 30, "cut.mkv");
    std::filesystem::resize_file(video.toStdString(), std::filesystem::file_size(video.toStdString()) / 2);
    const QString out = dir.path() + "/out";
    auto r = runCli(QStringList{"run", video, "--task", "seg", "--device", "cpu", "--input-size", "64x48",
                                "--output", out} +
                    model("seg"));
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.err.contains("cut.mkv") && r.err.contains("decode"), qPrintable(r.err));
    sapiens::VideoFileSource annotated((out + "/cut.annotated.mp4").toStdString());
    int count = 0;
    while (annotated.next()) ++count;
    const QJsonObject manifest = readJson(out + "/results.json");
    QVERIFY(count > 0);
    QCOMPARE(count, manifest["frames"].toObject()["processed"].toInt());
    QVERIFY(manifest.contains("error"));
  }

  // --shard K/N on one video: N jobs take consecutive frame ranges of the selection; merge joins their
  // manifests, annotated videos (packets copied) and keypoints into what one run writes.
  void aVideoSplitIntoShardsMergesIntoTheSingleRun() {
    QTemporaryDir dir;
    const QString video = writeVideo(dir, 14);
    const QStringList common = QStringList{"run", video,          "--task", "seg,pose", "--device",
                                           "cpu", "--input-size", "64x48",  "--frames", "1:14"} +
                               model("seg") + model("pose");
    const QString single = dir.path() + "/single", sharded = dir.path() + "/sharded";
    auto r = runCli(common + QStringList{"--output", single});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));

    int nextFirst = 1;
    for (int k = 1; k <= 3; ++k) {
      r = runCli(common + QStringList{"--output", sharded, "--shard", QString("%1/3").arg(k)});
      QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
      const QJsonObject part = readJson(QString("%1/results.shard-%2-of-3.json").arg(sharded).arg(k));
      const QJsonObject shard = part["shard"].toObject();
      QCOMPARE(shard["frames_total"].toInt(), 13);
      QCOMPARE(shard["first_frame"].toInt(), nextFirst);  // consecutive, no gap, no overlap
      nextFirst = shard["end_frame"].toInt();
      QCOMPARE(part["frames"].toObject()["processed"].toInt(),
               shard["end_frame"].toInt() - shard["first_frame"].toInt());
      QVERIFY(QFile::exists(QString("%1/clip.shard-%2-of-3.annotated.mp4").arg(sharded).arg(k)));
    }
    QCOMPARE(nextFirst, 14);
    QVERIFY(!QFile::exists(sharded + "/results.json"));

    r = runCli({"merge", sharded});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("13 frame(s)"), qPrintable(r.out));
    const QJsonObject merged = readJson(sharded + "/results.json");
    QCOMPARE(merged["frames"].toObject()["processed"].toInt(), 13);
    QCOMPARE(merged["merged_shards"].toInt(), 3);

    // Keypoints: the single run's frames, in order, with the same numbers.
    const QJsonArray singleFrames = readJson(single + "/clip.pose.json")["frames"].toArray();
    const QJsonArray mergedFrames = readJson(sharded + "/clip.pose.json")["frames"].toArray();
    QCOMPARE(mergedFrames.size(), 13);
    QCOMPARE(mergedFrames, singleFrames);  // track ids too: merge continued them across the boundaries
    QCOMPARE(merged["tracks"].toInt(), readJson(single + "/results.json")["tracks"].toInt());
    // Masks: the same files.
    for (int i = 1; i < 14; ++i) {
      const QString name = QString("/clip_frames/%1.seg.png").arg(i, 6, 10, QChar('0'));
      const cv::Mat a = cv::imread((single + name).toStdString(), cv::IMREAD_UNCHANGED);
      const cv::Mat b = cv::imread((sharded + name).toStdString(), cv::IMREAD_UNCHANGED);
      QVERIFY2(!a.empty() && !b.empty() && cv::countNonZero(a != b) == 0, qPrintable(name));
    }
    // The joined video: every frame, at the single run's times.
    const auto times = [](const QString& path) {
      sapiens::VideoFileSource source(path.toStdString());
      std::vector<double> t;
      while (auto frame = source.next()) t.push_back(frame->timestampSeconds);
      return t;
    };
    const std::vector<double> singleTimes = times(single + "/clip.annotated.mp4");
    const std::vector<double> mergedTimes = times(sharded + "/clip.annotated.mp4");
    QCOMPARE(mergedTimes.size(), std::size_t{13});
    QCOMPARE(mergedTimes.size(), singleTimes.size());
    for (std::size_t i = 0; i < mergedTimes.size(); ++i)
      QVERIFY2(std::abs(mergedTimes[i] - singleTimes[i]) < 1e-6, qPrintable(QString::number(i)));

    // A shard run again over another range no longer follows its neighbour: merge refuses, naming it.
    r = runCli(QStringList{"run", video, "--task", "seg,pose", "--device", "cpu", "--input-size", "64x48",
                           "--frames", "0:14", "--output", sharded, "--shard", "2/3"} +
               model("seg") + model("pose"));
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    r = runCli({"merge", sharded});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("shard 2 starts at frame 4") && r.err.contains("ends at frame 5"),
             qPrintable(r.err));

    // Smoothing and cameras cannot be split.
    r = runCli(common + QStringList{"--output", sharded, "--shard", "1/2", "--smooth"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--smooth"), qPrintable(r.err));
  }

  // Two people cross, one hidden behind the other for 5 frames (the box file lists only the front one):
  // each keeps one track id through it, in one run and in a run split into shards and merged. The single
  // run also writes the converted layouts, per frame with the same track ids.
  void peopleKeepTheirTrackThroughACrossing() {
    using sapiens::test::CrossingScene;
    QTemporaryDir dir;
    const std::string folder = dir.path().toStdString();
    const QString video = QString::fromStdString(sapiens::test::writeCrossingVideo(folder));
    const QString boxFile = QString::fromStdString(sapiens::test::writeCrossingBoxes(folder));
    const QStringList common = QStringList{"run", video,          "--task", "pose",        "--device",
                                           "cpu", "--input-size", "128x96", "--bbox-file", boxFile} +
                               model("pose");
    const QString single = dir.path() + "/single", sharded = dir.path() + "/sharded";
    auto r = runCli(common + QStringList{"--output", single, "--keypoint-format", "coco17,wholebody,openpose",
                                         "--kpt-thr", "0"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    const QJsonArray poses = readJson(single + "/crossing.pose.json")["frames"].toArray();
    QCOMPARE(poses.size(), CrossingScene::kFrames);
    checkConvertedFrames(single + "/crossing_frames", poses);
    if (QTest::currentTestFailed()) return;
    std::map<char, std::set<int>> idsOf;
    int bSeen = 0;
    for (int i = 0; i < CrossingScene::kFrames; ++i) {
      const QJsonArray people = poses[i].toObject()["instances"].toArray();
      QCOMPARE(people.size(), CrossingScene::bHidden(i) ? 1 : 2);
      for (const QJsonValue& person : people) {
        const QJsonArray box = person.toObject()["bbox"].toArray();
        QCOMPARE(box.size(), 4);
        const char who = CrossingScene::whoIs(box[0].toDouble(), box[1].toDouble(), i);
        QVERIFY2(who != '?', qPrintable(QString("frame %1: a pose in no given box").arg(i)));
        idsOf[who].insert(person.toObject()["track_id"].toInt(-1));
        bSeen += who == 'b';
      }
    }
    QCOMPARE(bSeen, CrossingScene::kFrames - 5);
    QCOMPARE(idsOf['a'], std::set<int>{0});  // no identity switch, and b's return starts no new track
    QCOMPARE(idsOf['b'], std::set<int>{1});
    QCOMPARE(readJson(single + "/results.json")["tracks"].toInt(), 2);

    // Split at frame 20, inside the occlusion: the second shard alone would call b a new person.
    for (int k = 1; k <= 2; ++k) {
      r = runCli(common + QStringList{"--output", sharded, "--shard", QString("%1/2").arg(k)});
      QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    }
    r = runCli({"merge", sharded});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QCOMPARE(readJson(sharded + "/crossing.pose.json")["frames"].toArray(), poses);
    QCOMPARE(readJson(sharded + "/results.json")["tracks"].toInt(), 2);

    // Boxes per frame belong to one video: with pictures they are refused, naming the option.
    r = runCli({"run", resource("samples/astronaut.png").c_str(), "--task", "pose", "--device", "cpu",
                "--bbox-file", boxFile, "--output", dir.path() + "/pictures"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--bbox-file") && r.err.contains("per frame"), qPrintable(r.err));
  }

  void videoOptionsAreChecked() {
    QTemporaryDir dir;
    auto r = runCli({"run", resource("samples/astronaut.png").c_str(), "--task", "seg", "--output",
                     dir.path(), "--frames", "5:10"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("video"), qPrintable(r.err));
    const QString video = writeVideo(dir, 2);
    r = runCli({"run", video, "--task", "seg", "--output", dir.path(), "--frames", "9:3"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--frames"), qPrintable(r.err));
    r = runCli({"run", "--task", "seg", "--output", dir.path()});
    QCOMPARE(r.exitCode, 2);
  }
};

QTEST_APPLESS_MAIN(CliVideoTest)
#include "test_cli_video.moc"
