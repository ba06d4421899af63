// P20: NaN and +-inf, alone and mixed with finite values, through every stage after the model: seg
// argmax, the output check, pose decode, flip averaging, temporal smoothing, tracking, person boxes and
// the exports (keypoint JSON, COCO, PLY, NPY, EXR). Each returns within a bound and either keeps the values
// flagged (counted, kept non-finite where the format has room, not drawn, not tracked) or refuses with a
// message; none crashes, hangs, poisons later frames or writes a number its reader cannot parse.

#include "pipeline/output_check.h"
#include "pipeline/pose_decode.h"
#include "pipeline/pose_flip.h"
#include "pipeline/postprocess.h"
#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/exr.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/npy.h"
#include "sapiens/export/ply.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/pipeline/person_tracker.h"
#include "sapiens/pipeline/temporal_smoothing.h"
#include "sapiens/result/keypoint_metadata.h"

#include <ATen/ATen.h>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr qint64 kStageBoundMs = 20000;

struct Pattern {
  const char* name;
  at::Tensor values;
};

// The same random tensor poisoned five ways: all NaN, all +inf, all -inf, and a few of each among
// finite values (once sparse, once half of it).
std::vector<Pattern> poisoned(at::IntArrayRef shape, std::uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor finite = at::randn(shape);
  const at::Tensor mixed = finite.clone().view(-1);
  for (std::int64_t i = 0; i < mixed.numel(); i += 37)
    mixed[i] = i % 3 == 0 ? kNan : (i % 3 == 1 ? kInf : -kInf);
  const at::Tensor half = finite.clone().view(-1);
  half.narrow(0, 0, half.numel() / 2).fill_(kNan);
  return {{"NaN", at::full(shape, kNan)},
          {"+inf", at::full(shape, kInf)},
          {"-inf", at::full(shape, -kInf)},
          {"mixed", mixed.view(shape)},
          {"half NaN", half.view(shape)}};
}

sapiens::PoseInstance poseOf(int keypoints, float x, float y, float score) {
  sapiens::PoseInstance pose;
  pose.bbox = {x - 20, y - 40, x + 20, y + 40};
  pose.bboxSource = "detector";
  for (int k = 0; k < keypoints; ++k) {
    pose.keypoints.push_back({x + k % 5, y + k / 5});
    pose.scores.push_back(score);
  }
  return pose;
}

std::int64_t nonFinite(const at::Tensor& t) {
  return at::isfinite(t).logical_not().sum().item<std::int64_t>();
}

}  // namespace

class NonFiniteStagesTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void segLabelsStayClassesAndTheCheckCountsEveryValue() {
    for (const Pattern& p : poisoned({1, 29, 24, 18}, 1)) {
      QElapsedTimer timer;
      timer.start();
      const sapiens::OutputCheck check = sapiens::checkOutput(p.values);
      QCOMPARE(check.nonFiniteValues, nonFinite(p.values));
      QVERIFY2(check.invalidPixels > 0 && check.invalidPixels <= check.pixels, p.name);
      const cv::Mat labels = sapiens::segLabels(p.values, cv::Size(50, 40)).labels;
      QCOMPARE(labels.size(), cv::Size(50, 40));
      double largest = 0;
      cv::minMaxLoc(labels, nullptr, &largest);
      QVERIFY2(largest < 29, p.name);
      QVERIFY2(timer.elapsed() < kStageBoundMs, p.name);
    }
  }

  void decodedKeypointsAreFiniteOrBelowEveryThreshold() {
    for (const Pattern& p : poisoned({17, 64, 48}, 2)) {
      QElapsedTimer timer;
      timer.start();
      const sapiens::DecodedKeypoints decoded = sapiens::decodeUdpHeatmaps(p.values, {256, 192});
      QCOMPARE(decoded.scores.size(), std::size_t{17});
      for (std::size_t k = 0; k < decoded.scores.size(); ++k) {
        const auto& xy = decoded.inputPixels[k];
        const bool finite = std::isfinite(xy[0]) && std::isfinite(xy[1]);
        // A keypoint that passes a threshold (0 included) is drawn and tracked: it must have a place.
        QVERIFY2(finite || !(decoded.scores[k] >= 0.0f),
                 qPrintable(QString("%1: keypoint %2 at (%3, %4) scores %5")
                                .arg(p.name)
                                .arg(k)
                                .arg(xy[0])
                                .arg(xy[1])
                                .arg(decoded.scores[k])));
      }
      QVERIFY2(timer.elapsed() < kStageBoundMs, p.name);
    }
  }

  void flipAveragingKeepsNonFiniteValuesWhereTheyWere() {
    const std::vector<std::int64_t> identity = {0, 1, 2, 3};
    for (const Pattern& p : poisoned({1, 4, 16, 12}, 3)) {
      const at::Tensor finite = at::randn({1, 4, 16, 12});
      const at::Tensor averaged = sapiens::averageFlipTest(p.values, finite, identity);
      QCOMPARE(nonFinite(averaged), nonFinite(p.values));
      const at::Tensor swapped = sapiens::averageFlipTest(finite, p.values, identity);
      QCOMPARE(nonFinite(swapped), nonFinite(p.values));
    }
  }

  void smoothingFlagsABadFrameAndRecoversAfterIt() {
    sapiens::TemporalSmoother smoother;
    auto frameWith = [](float value, float score) {
      sapiens::FrameResult frame;
      frame.width = 8;
      frame.height = 6;
      frame.poses = {poseOf(17, 100 + value, 80 + value, score)};
      frame.normal = cv::Mat(6, 8, CV_32FC3, cv::Scalar(0, 0, 1));
      frame.pointmap = cv::Mat(6, 8, CV_32FC3, cv::Scalar(0.1, 0.2, 2.0 + value / 1000));
      frame.albedo = cv::Mat(6, 8, CV_32FC3, cv::Scalar(0.5, 0.5, 0.5));
      return frame;
    };
    sapiens::FrameResult first = frameWith(0, 0.9f);
    smoother.apply(first, 0.0);
    double time = 0.0;
    for (const float bad : {kNan, kInf, -kInf}) {
      sapiens::FrameResult poisonedFrame = frameWith(0, 0.9f);
      for (auto& point : poisonedFrame.poses[0].keypoints) point = {bad, bad};
      poisonedFrame.pointmap.setTo(cv::Scalar(bad, bad, bad));
      poisonedFrame.normal.setTo(cv::Scalar(bad, bad, bad));
      poisonedFrame.albedo.setTo(cv::Scalar(bad, bad, bad));
      smoother.apply(poisonedFrame, time += 0.04);
      // The bad frame stays bad (it was flagged by the output check), not made up from the last one.
      QVERIFY(!std::isfinite(poisonedFrame.poses[0].keypoints[0][0]));
    }
    sapiens::FrameResult next = frameWith(1, 0.9f);
    smoother.apply(next, 0.2);
    for (const auto& point : next.poses[0].keypoints)
      QVERIFY2(std::isfinite(point[0]) && std::isfinite(point[1]), "a non-finite frame poisoned the filter");
    for (const cv::Mat* map : {&next.pointmap, &next.normal, &next.albedo}) {
      cv::Mat finite;
      cv::compare(*map, *map, finite, cv::CMP_EQ);  // NaN != NaN
      QCOMPARE(cv::countNonZero(finite.reshape(1)), static_cast<int>(map->total() * 3));
      QVERIFY(cv::checkRange(*map));
    }
  }

  void trackingEndsAndReportsPeopleWithoutAPlace() {
    // Keypoints without a place are no evidence (the box still places the person); a box without a
    // place leaves the person untracked and counted.
    sapiens::PersonTracker tracker;
    QElapsedTimer timer;
    timer.start();
    int secondTrack = -1;
    for (int frame = 0; frame < 30; ++frame) {
      std::vector<sapiens::PoseInstance> people = {poseOf(17, 100 + frame, 100, 0.9f),
                                                   poseOf(17, 300, 100, 0.9f)};
      if (frame % 3 == 1)
        for (auto& point : people[1].keypoints) point = {kNan, kInf};
      if (frame % 3 == 2) people[1].bbox = {kNan, kNan, kInf, -kInf};
      tracker.assign(people);
      QVERIFY(people[0].trackId >= 0);
      if (frame == 0) secondTrack = people[1].trackId;
      if (frame % 3 == 1) QCOMPARE(people[1].trackId, secondTrack);
      if (frame % 3 == 2)
        QVERIFY2(people[1].trackId == -1,
                 qPrintable(QString("frame %1: track %2").arg(frame).arg(people[1].trackId)));
    }
    QCOMPARE(tracker.peopleNotTracked(), 10);
    QVERIFY(timer.elapsed() < kStageBoundMs);
  }

  void keypointFilesParseAndHoldNoInventedNumbers() {
    sapiens::KeypointPredictions predictions;
    predictions.imageWidth = 640;
    predictions.imageHeight = 480;
    predictions.numKeypoints = 308;
    sapiens::PoseInstance pose = poseOf(308, 200, 200, 0.9f);
    pose.keypoints[0] = {kNan, 3.0};
    pose.keypoints[1] = {kInf, -kInf};
    pose.scores[2] = kNan;
    pose.scores[3] = kInf;
    pose.bbox = {kNan, 1, 2, kInf};
    predictions.frames.push_back({"frame.png", {pose}});
    const nlohmann::json official = nlohmann::json::parse(sapiens::keypointsJsonText(predictions));
    const std::string coco = sapiens::cocoKeypointsJsonText(predictions, sapiens::keypoints308());
    const nlohmann::json cocoJson = nlohmann::json::parse(coco);
    QVERIFY(!official.dump().empty() && !cocoJson.dump().empty());
    // COCO has no null: a keypoint without a place is written as not visible (0, 0, 0).
    const auto& keypoints = cocoJson["annotations"][0]["keypoints"];
    QCOMPARE(keypoints[2].get<double>(), 0.0);
    QCOMPARE(keypoints[5].get<double>(), 0.0);
  }

  void pointCloudsAndArraysHoldOnlyWhatReadersParse() {
    cv::Mat pointmap(12, 16, CV_32FC3, cv::Scalar(0.1, 0.2, 2.0));
    pointmap.at<cv::Vec3f>(1, 1) = {kNan, 0, 2};
    pointmap.at<cv::Vec3f>(2, 2) = {0, kInf, 2};
    pointmap.at<cv::Vec3f>(3, 3) = {0, 0, -kInf};
    cv::Mat normal(12, 16, CV_32FC3, cv::Scalar(0, 0, 1));
    normal.at<cv::Vec3f>(4, 4) = {kNan, kNan, kNan};
    const sapiens::PointCloud cloud = sapiens::buildPointCloud(pointmap, normal, {}, {});
    const std::string ascii = sapiens::encodePly(cloud, sapiens::PlyEncoding::Ascii);
    for (const char* token : {"nan", "inf", "NaN", "Inf"})
      QVERIFY2(ascii.find(token) == std::string::npos, token);
    QCOMPARE(static_cast<int>(cloud.positions.size() / 3), 12 * 16 - 3);
    QTemporaryDir dir;
    const std::string npy = dir.filePath("map.npy").toStdString();
    sapiens::writeNpy(npy, pointmap);
    const sapiens::NpyArray back = sapiens::readNpy(npy);
    QCOMPARE(back.count(), pointmap.total() * 3);
    QVERIFY(std::isnan(back.values<float>()[(1 * 16 + 1) * 3]));  // NPY keeps the value as it was
    if (!sapiens::exrWritingSupported()) return;
    const std::string exr = dir.filePath("map.exr").toStdString();
    sapiens::writeExr(exr, pointmap);
    const cv::Mat exrBack = cv::imread(exr, cv::IMREAD_UNCHANGED);
    QCOMPARE(exrBack.size(), pointmap.size());
    QVERIFY(std::isinf(exrBack.at<cv::Vec3f>(3, 3)[2]) || std::isinf(exrBack.at<cv::Vec3f>(3, 3)[0]));
  }
};

QTEST_APPLESS_MAIN(NonFiniteStagesTest)
#include "test_non_finite_stages.moc"
