// Goliath-308 poses in other layouts: the table's sizes, each converted keypoint the Goliath keypoint of
// the same anatomy (looked up here by name, not through the table), and the files read back by an
// independent reader (Python's json module, checking each layout's rules: COCO's keypoints triplets and
// 1-based skeleton, COCO-WholeBody's part fields, OpenPose's 75/70/21-point arrays).

#include "sapiens/export/converted_keypoints.h"
#include "sapiens/io/export_error.h"
#include "sapiens/result/keypoint_formats.h"
#include "sapiens/result/keypoint_metadata.h"
#include "test_support.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

using namespace sapiens;

namespace {

int goliath(const std::string& name) {
  const auto& names = keypoints308().names;
  return int(std::find(names.begin(), names.end(), name) - names.begin());
}

// Keypoint i at (i, 1000 + i) with score 0.5 + i / 1000: every one above the default threshold.
PoseInstance syntheticPose() {
  PoseInstance pose;
  pose.bbox = {1, 2, 300, 400};
  for (int i = 0; i < 308; ++i) {
    pose.keypoints.push_back({double(i), 1000.0 + i});
    pose.scores.push_back(0.5f + float(i) / 1000.0f);
  }
  return pose;
}

KeypointPredictions predictionsOf(const PoseInstance& pose) {
  KeypointPredictions p;
  p.imageWidth = 640;
  p.imageHeight = 480;
  p.frames.push_back({"picture.png", {pose}});
  return p;
}

// Runs Python on `script` with `path` as argv[1]; its stdout, trimmed.
QString readWithPython(const QString& script, const QString& path) {
  QProcess python;
  python.start(QFileInfo::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3", {"-c", script, path});
  if (!python.waitForFinished(60000) || python.exitCode() != 0)
    return "FAILED: " + QString::fromUtf8(python.readAllStandardError());
  return QString::fromUtf8(python.readAllStandardOutput()).trimmed();
}

// `predictions` in `format`, parsed.
QJsonObject converted(KeypointFormat format, const KeypointPredictions& predictions) {
  return QJsonDocument::fromJson(QByteArray::fromStdString(convertedKeypointsJsonText(format, predictions)))
      .object();
}

// How `part`'s (x, y, third) triplets in `values` are written: the count of present ones, or the first
// keypoint that is absent (0, 0, 0) although it has a Goliath counterpart or present although it has none
// (the synthetic pose's keypoints all pass the threshold).
QString presence(const QJsonArray& values, const KeypointPart& part) {
  int present = 0;
  for (std::size_t k = 0; k < part.sources.size(); ++k) {
    const QJsonArray t{values[int(3 * k)], values[int(3 * k + 1)], values[int(3 * k + 2)]};
    const bool absent = t[0].toDouble() == 0 && t[1].toDouble() == 0 && t[2].toDouble() == 0;
    if (part.sources[k].empty() != absent)
      return QStringLiteral("%1 %2 written as %3")
          .arg(QString::fromStdString(part.name), QString::fromStdString(part.names[k]),
               QString::fromUtf8(QJsonDocument(t).toJson(QJsonDocument::Compact)));
    present += absent ? 0 : 1;
  }
  return QStringLiteral("%1 present").arg(present);
}

// The synthetic pose written in `format`, then read by Python running `script` on the file.
QString writtenAndReadBack(KeypointFormat format, const QString& script) {
  QTemporaryDir dir;
  const QString path = dir.filePath("pose.json");
  writeConvertedKeypoints(path.toStdString(), format, predictionsOf(syntheticPose()));
  return readWithPython(script, path);
}

}  // namespace

class TestKeypointFormats : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void layoutsHaveTheirPublishedSizes() {
    QCOMPARE(keypointLayout(KeypointFormat::Coco17).part("body").names.size(), std::size_t{17});
    const KeypointLayout& whole = keypointLayout(KeypointFormat::CocoWholeBody);
    std::size_t total = 0;
    for (const KeypointPart& part : whole.parts) total += part.names.size();
    QCOMPARE(total, std::size_t{133});
    QCOMPARE(whole.part("face").names.size(), std::size_t{68});
    const KeypointLayout& openpose = keypointLayout(KeypointFormat::OpenPose);
    QCOMPARE(openpose.part("pose").names.size(), std::size_t{25});
    QCOMPARE(openpose.part("face").names.size(), std::size_t{70});
    QCOMPARE(openpose.part("hand_left").names.size(), std::size_t{21});
    QCOMPARE(keypointLayout(KeypointFormat::Coco17).skeleton.size(), std::size_t{19});
    for (const char* name : {"coco17", "wholebody", "openpose"}) QVERIFY(parseKeypointFormat(name));
    QVERIFY(!parseKeypointFormat("coco18"));
  }

  void convertedKeypointsAreTheSameAnatomy() {
    const PoseInstance pose = syntheticPose();
    const PoseInstance coco = convertPose(pose, keypointLayout(KeypointFormat::Coco17).part("body"));
    QCOMPARE(coco.keypoints[0][0], double(goliath("nose")));
    QCOMPARE(coco.keypoints[9][0], double(goliath("left_wrist")));  // COCO 9 = left wrist
    QCOMPARE(coco.keypoints[16][1], 1000.0 + goliath("right_ankle"));
    const KeypointLayout& openpose = keypointLayout(KeypointFormat::OpenPose);
    const PoseInstance body = convertPose(pose, openpose.part("pose"));
    QCOMPARE(body.keypoints[1][0], double(goliath("neck")));
    QCOMPARE(body.keypoints[8][0], (goliath("left_hip") + goliath("right_hip")) / 2.0);  // MidHip
    QCOMPARE(body.scores[8], std::min(pose.scores[goliath("left_hip")], pose.scores[goliath("right_hip")]));
    const PoseInstance hand = convertPose(pose, openpose.part("hand_right"));
    QCOMPARE(hand.keypoints[0][0], double(goliath("right_wrist")));
    QCOMPARE(hand.keypoints[1][0], double(goliath("right_thumb_third_joint")));  // base ...
    QCOMPARE(hand.keypoints[4][0], double(goliath("right_thumb4")));             // ... to tip
    QCOMPARE(hand.keypoints[20][0], double(goliath("right_pinky_finger4")));
    const PoseInstance face = convertPose(pose, openpose.part("face"));
    QCOMPARE(face.scores[0], 0.0f);  // the jaw contour: no Goliath counterpart
    QCOMPARE(face.keypoints[30][0], double(goliath("tip_of_nose")));
    QCOMPARE(face.keypoints[69][0], double(goliath("l_center_of_pupil")));
  }

  void cocoSeventeenReadsBack() {
    const QString out = writtenAndReadBack(
        KeypointFormat::Coco17,
        "import json, sys\n"
        "d = json.load(open(sys.argv[1]))\n"
        "cat = d['categories'][0]; k = len(cat['keypoints'])\n"
        "assert k == 17 and all(1 <= i <= k for link in cat['skeleton'] for i in link)\n"
        "ids = {im['id'] for im in d['images']}\n"
        "for a in d['annotations']:\n"
        "    assert a['image_id'] in ids and len(a['keypoints']) == 3 * k and len(a['bbox']) == 4\n"
        "    assert a['num_keypoints'] == sum(1 for v in a['keypoints'][2::3] if v > 0)\n"
        "a = d['annotations'][0]['keypoints']\n"
        "print(cat['keypoints'][9], '%g' % a[27], a[29])\n");
    QCOMPARE(out, QStringLiteral("left_wrist %1 2").arg(goliath("left_wrist")));
  }

  void cocoWholeBodyReadsBack() {
    const QString out = writtenAndReadBack(
        KeypointFormat::CocoWholeBody,
        "import json, sys\n"
        "a = json.load(open(sys.argv[1]))['annotations'][0]\n"
        "sizes = [len(a[f]) for f in ('keypoints', 'foot_kpts', 'face_kpts', 'lefthand_kpts', "
        "'righthand_kpts')]\n"
        "assert all(isinstance(a[p + '_valid'], bool) for p in ('foot', 'face', 'lefthand', 'righthand'))\n"
        "assert all(len(a[p + '_box']) == 4 for p in ('face', 'lefthand', 'righthand'))\n"
        "print(sum(sizes) // 3, '%g %g' % (a['lefthand_kpts'][0], a['foot_kpts'][6]), "
        "a['face_kpts'][0:3])\n");
    QCOMPARE(out, QStringLiteral("133 %1 %2 [0, 0, 0]").arg(goliath("left_wrist")).arg(goliath("left_heel")));
  }

  void openPoseReadsBack() {
    const QString out = writtenAndReadBack(
        KeypointFormat::OpenPose,
        "import json, sys\n"
        "d = json.load(open(sys.argv[1])); p = d['people'][0]\n"
        "assert d['version'] == 1.3 and p['person_id'] == [-1]\n"
        "assert [len(p[k]) for k in ('pose_keypoints_2d', 'face_keypoints_2d', 'hand_left_keypoints_2d',\n"
        "        'hand_right_keypoints_2d')] == [75, 210, 63, 63]\n"
        "print('%g %g' % (p['pose_keypoints_2d'][3], p['pose_keypoints_2d'][24]))\n");
    QCOMPARE(
        out,
        QStringLiteral("%1 %2").arg(goliath("neck")).arg((goliath("left_hip") + goliath("right_hip")) / 2.0));
  }

  // A layout's keypoint with no Goliath counterpart (50 of the 68- and 70-point faces: the jaw and cheek
  // contours) is absent at every threshold, 0 included: never a labelled point at the origin, and never
  // part of the face box. COCO-17's keypoints all have one: each is labelled at 0.
  void unmatchedKeypointsAreAbsentAtEveryThreshold() {
    for (const float threshold : {0.0f, 0.3f}) {
      KeypointPredictions predictions = predictionsOf(syntheticPose());
      predictions.keypointThreshold = threshold;
      const KeypointLayout& whole = keypointLayout(KeypointFormat::CocoWholeBody);
      const QJsonObject a =
          converted(KeypointFormat::CocoWholeBody, predictions)["annotations"].toArray()[0].toObject();
      QCOMPARE(presence(a["face_kpts"].toArray(), whole.part("face")), QStringLiteral("18 present"));
      QCOMPARE(presence(a["keypoints"].toArray(), whole.part("body")), QStringLiteral("17 present"));
      QVERIFY(a["face_valid"].toBool());
      // The box of the 18 face points (synthetic keypoint i is at (i, 1000 + i)), not stretched to (0, 0).
      const PoseInstance face = convertPose(syntheticPose(), whole.part("face"));
      double x1 = 1e9, x2 = -1e9;
      for (std::size_t k = 0; k < face.keypoints.size(); ++k) {
        if (whole.part("face").sources[k].empty()) continue;
        x1 = std::min(x1, face.keypoints[k][0]), x2 = std::max(x2, face.keypoints[k][0]);
      }
      const QJsonArray box = a["face_box"].toArray();
      QCOMPARE(box[0].toDouble(), x1);
      QCOMPARE(box[1].toDouble(), 1000 + x1);
      QCOMPARE(box[2].toDouble(), x2 - x1);

      const KeypointLayout& openpose = keypointLayout(KeypointFormat::OpenPose);
      const QJsonObject person =
          converted(KeypointFormat::OpenPose, predictions)["people"].toArray()[0].toObject();
      QCOMPARE(presence(person["face_keypoints_2d"].toArray(), openpose.part("face")),
               QStringLiteral("20 present"));
      QCOMPARE(presence(person["pose_keypoints_2d"].toArray(), openpose.part("pose")),
               QStringLiteral("25 present"));

      const QJsonObject coco =
          converted(KeypointFormat::Coco17, predictions)["annotations"].toArray()[0].toObject();
      QCOMPARE(coco["num_keypoints"].toInt(), 17);
    }
    // The keypoints themselves: no position where there is no counterpart.
    const PoseInstance face =
        convertPose(syntheticPose(), keypointLayout(KeypointFormat::OpenPose).part("face"));
    QVERIFY(std::isnan(face.keypoints[0][0]) && std::isnan(face.keypoints[0][1]));
  }

  void aPoseOfAnotherLayoutIsRefusedWithThePath() {
    PoseInstance small;
    small.keypoints = {{1, 2}};
    small.scores = {1.0f};
    QTemporaryDir dir;
    const std::string path = dir.filePath("x.json").toStdString();
    QVERIFY_THROWS_EXCEPTION(ExportError,
                             writeConvertedKeypoints(path, KeypointFormat::Coco17, predictionsOf(small)));
  }
};

QTEST_APPLESS_MAIN(TestKeypointFormats)
#include "test_keypoint_formats.moc"
