// Keypoints lifted to 3-D by the pointmap: the median of the person's valid samples around each keypoint
// (so an edge keypoint keeps the person's depth), NaN where there is nothing to lift, and the lifted
// points in the pose JSON (null below the threshold, each video frame's time) read back as written.

#include "sapiens/export/keypoints_json.h"
#include "sapiens/pipeline/keypoint_lifting.h"

#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

using namespace sapiens;

namespace {

// A picture whose left half is the person at 2 m and whose right half is a wall at 10 m; x and y of each
// sample are its pixel coordinates in centimetres, so that a median is easy to predict.
struct Scene {
  cv::Mat pointmap = cv::Mat(100, 100, CV_32FC3);
  cv::Mat labels = cv::Mat(100, 100, CV_8UC1);
  Scene() {
    for (int y = 0; y < 100; ++y)
      for (int x = 0; x < 100; ++x) {
        const bool person = x < 50;
        pointmap.at<cv::Vec3f>(y, x) = {x / 100.0f, y / 100.0f, person ? 2.0f : 10.0f};
        labels.at<uchar>(y, x) = person ? 5 : 0;
      }
  }
};

PoseInstance poseAt(std::vector<std::array<double, 2>> keypoints, float boxSide = 400) {
  PoseInstance pose;
  pose.bbox = {0, 0, boxSide, boxSide};
  pose.scores.assign(keypoints.size(), 0.9f);
  pose.keypoints = std::move(keypoints);
  return pose;
}

bool isNan3(const std::array<double, 3>& p) {
  return std::isnan(p[0]) && std::isnan(p[1]) && std::isnan(p[2]);
}

}  // namespace

class Keypoints3dTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void windowGrowsWithThePersonUpToSixteenPixels() {
    QCOMPARE(liftingRadius({0, 0, 50, 100}), 2);
    QCOMPARE(liftingRadius({0, 0, 200, 600}), 9);
    QCOMPARE(liftingRadius({0, 0, 4000, 3000}), 16);
    QCOMPARE(liftingRadius({0, 0, std::nanf(""), 10}), 2);
  }

  void aKeypointOnTheEdgeKeepsThePersonsDepth() {
    Scene scene;
    // Box side 400: radius 6. The keypoint sits on the last person column, half its window on the wall.
    const PoseInstance pose = poseAt({{49.5, 30.5}});
    const auto withMask = liftKeypoints(pose, scene.pointmap, scene.labels);
    QCOMPARE(withMask.size(), std::size_t(1));
    QCOMPARE(withMask[0][2], 2.0);
    QCOMPARE(withMask[0][1], 0.30000001192092896);  // rows 24..36: the middle one
    QVERIFY(withMask[0][0] >= 0.43 && withMask[0][0] <= 0.49);
    // Without a mask the median still picks one surface's depth, never a blend of the two.
    const double z = liftKeypoints(pose, scene.pointmap, cv::Mat())[0][2];
    QVERIFY(z == 2.0 || z == 10.0);
  }

  void invalidSamplesAreLeftOutAndNothingToLiftIsNan() {
    Scene scene;
    const float nan = std::nanf("");
    scene.pointmap(cv::Rect(0, 0, 20, 100)).setTo(cv::Scalar(nan, nan, nan));
    scene.pointmap(cv::Rect(20, 0, 3, 100)).setTo(cv::Scalar(0, 0, -1));  // behind the camera
    const auto lifted = liftKeypoints(
        poseAt({{24.0, 50.0}, {10.0, 50.0}, {-1.0, 5.0}, {5.0, 100.0}, {std::nan(""), 3.0}, {70.0, 50.0}}),
        scene.pointmap, scene.labels);
    QCOMPARE(lifted.size(), std::size_t(6));
    QCOMPARE(lifted[0][2], 2.0);  // partly invalid: the valid person samples (x >= 23) decide
    QVERIFY(lifted[0][0] >= 0.23);
    QVERIFY(isNan3(lifted[1]));  // every sample NaN
    QVERIFY(isNan3(lifted[2]));  // left of the picture
    QVERIFY(isNan3(lifted[3]));  // below it
    QVERIFY(isNan3(lifted[4]));  // no position
    QVERIFY(isNan3(lifted[5]));  // on the wall: not the person
  }

  void aFrameWithoutPointmapHasNoLiftedPoints() {
    FrameResult frame;
    frame.poses.push_back(poseAt({{10, 10}}));
    frame.poses[0].keypoints3d = {{1, 2, 3}};
    liftFrameKeypoints(frame);
    QVERIFY(frame.poses[0].keypoints3d.empty());
    Scene scene;
    frame.pointmap = scene.pointmap;
    frame.segLabels = scene.labels;
    liftFrameKeypoints(frame);
    QCOMPARE(frame.poses[0].keypoints3d.size(), std::size_t(1));
    QCOMPARE(frame.poses[0].keypoints3d[0][2], 2.0);
  }

  void thePoseJsonCarriesTheLiftedPointsAndTheTime() {
    QTemporaryDir dir;
    KeypointPredictions predictions;
    predictions.video = "clip.mp4";
    predictions.imageWidth = predictions.imageHeight = 100;
    predictions.numKeypoints = 3;
    predictions.keypointThreshold = 0.3f;
    PoseInstance pose = poseAt({{10, 10}, {20, 20}, {30, 30}});
    pose.scores = {0.9f, 0.1f, 0.8f};
    pose.trackId = 4;
    pose.keypoints3d = {{0.25, -0.5, 2.125}, {1, 1, 1}, {std::nan(""), 0, 0}};
    predictions.frames.push_back({"000007", {pose}, 0.23356});
    const std::string path = dir.filePath("clip.pose.json").toStdString();
    writeKeypointsJson(path, predictions);

    std::ifstream in(path);
    const auto frame = nlohmann::json::parse(in)["frames"][0];
    QCOMPARE(frame["time"].get<double>(), 0.23356);
    const auto points = frame["instances"][0]["keypoints_3d"];
    QCOMPARE(points.dump(), std::string("[[0.25,-0.5,2.125],null,null]"));  // below threshold; no value

    const KeypointPredictions back = readKeypointsJson(path);
    QCOMPARE(*back.frames[0].time, 0.23356);
    const auto& lifted = back.frames[0].instances[0].keypoints3d;
    QCOMPARE(lifted.size(), std::size_t(3));
    QCOMPARE(lifted[0][2], 2.125);
    QVERIFY(isNan3(lifted[1]) && isNan3(lifted[2]));
  }

  void aPictureFileHasNeitherTimeNorPointsWithoutAPointmap() {
    QTemporaryDir dir;
    KeypointPredictions predictions;
    predictions.numKeypoints = 1;
    predictions.frames.push_back({"a.png", {poseAt({{1, 1}})}, std::nullopt});
    const std::string path = dir.filePath("a.pose.json").toStdString();
    writeKeypointsJson(path, predictions);
    std::ifstream in(path);
    const auto frame = nlohmann::json::parse(in)["frames"][0];
    QVERIFY(!frame.contains("time"));
    QVERIFY(!frame["instances"][0].contains("keypoints_3d"));
    QVERIFY(!readKeypointsJson(path).frames[0].time);
  }
};

QTEST_APPLESS_MAIN(Keypoints3dTest)
#include "test_keypoints_3d.moc"
