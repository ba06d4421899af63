// The pose overlay: keypoints and links appear in the official colours where the scores pass the threshold
// and the ends lie inside the picture, nothing changes far from them, and sizes scale with the picture.

#include "sapiens/export/overlay.h"
#include "sapiens/export/pixel_description.h"
#include "sapiens/export/track_colors.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"
#include "test_support.h"

#include <QtTest>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <fstream>

namespace {

constexpr int kLeftShoulder = 5, kRightShoulder = 6, kLeftElbow = 7, kRightElbow = 8, kNose = 0;

/// Colours straight from the resource file (RGB), converted to OpenCV's BGR here.
struct OfficialColors {
  nlohmann::json layout;
  OfficialColors() {
    std::ifstream in(sapiens::test::resource("data/keypoints308.json"));
    layout = nlohmann::json::parse(in);
  }
  cv::Vec3b keypoint(int k) const { return bgr(layout["keypoint_colors"][static_cast<std::size_t>(k)]); }
  cv::Vec3b link(int a, int b) const {
    const auto& links = layout["skeleton_links"];
    for (std::size_t l = 0; l < links.size(); ++l) {
      if (links[l][0].get<int>() == a && links[l][1].get<int>() == b)
        return bgr(layout["skeleton_link_colors"][l]);
    }
    return {};
  }
  static cv::Vec3b bgr(const nlohmann::json& rgb) {
    return cv::Vec3b(rgb[2].get<uchar>(), rgb[1].get<uchar>(), rgb[0].get<uchar>());
  }
};

sapiens::PoseInstance lowScorePose() {
  sapiens::PoseInstance pose;
  pose.bbox = {50, 40, 450, 460};
  for (int k = 0; k < 308; ++k) {
    pose.keypoints.push_back({250.0 + (k % 20), 250.0 + (k / 20)});  // all near the centre, all hidden
    pose.scores.push_back(0.1f);
  }
  return pose;
}

}  // namespace

class TestExportOverlay : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void keypointsAndLinksGetTheirColours();
  void hiddenAndOutsideKeypointsDrawNothing();
  void boxIsDrawnAroundThePerson();
  void trackedPeopleHaveTheirTracksColourAndId();
  void sizesScaleWithThePicture();
  void refusesPosesTheLayoutDoesNotDescribe();
  void aPixelIsDescribedByEveryResult();
};

void TestExportOverlay::keypointsAndLinksGetTheirColours() {
  const OfficialColors colors;
  QVERIFY(colors.link(kLeftShoulder, kLeftElbow) != cv::Vec3b());
  const cv::Mat original(512, 512, CV_8UC3, cv::Scalar(40, 40, 40));
  cv::Mat image = original.clone();
  auto pose = lowScorePose();
  pose.keypoints[kLeftShoulder] = {100.4, 100.0};
  pose.keypoints[kLeftElbow] = {100.0, 300.6};
  pose.scores[kLeftShoulder] = 0.9f;
  pose.scores[kLeftElbow] = 0.3f;  // exactly at the threshold: drawn
  sapiens::PoseDrawStyle style;
  style.boxThickness = 0;
  sapiens::drawPoses(image, {pose}, sapiens::keypoints308(), style);

  QCOMPARE(image.at<cv::Vec3b>(100, 100), colors.keypoint(kLeftShoulder));
  QCOMPARE(image.at<cv::Vec3b>(301, 100), colors.keypoint(kLeftElbow));  // 300.6 rounds to 301
  QCOMPARE(image.at<cv::Vec3b>(200, 100), colors.link(kLeftShoulder, kLeftElbow));
  // Far from both keypoints and the link nothing changed, including where the hidden keypoints are.
  QCOMPARE(image.at<cv::Vec3b>(450, 450), original.at<cv::Vec3b>(450, 450));
  QCOMPARE(image.at<cv::Vec3b>(255, 255), original.at<cv::Vec3b>(255, 255));
  QCOMPARE(image.at<cv::Vec3b>(200, 140), original.at<cv::Vec3b>(200, 140));
  const cv::Mat changed = (image != original);
  cv::Mat changedAny;
  cv::transform(changed, changedAny, cv::Matx13f(1, 1, 1));
  const cv::Rect drawnArea = cv::boundingRect(changedAny);
  QVERIFY(drawnArea.x >= 100 - 10 && drawnArea.br().x <= 100 + 11);
  QVERIFY(drawnArea.y >= 100 - 10 && drawnArea.br().y <= 301 + 11);
}

void TestExportOverlay::hiddenAndOutsideKeypointsDrawNothing() {
  const cv::Mat original(300, 300, CV_8UC3, cv::Scalar(10, 200, 30));
  cv::Mat image = original.clone();
  auto pose = lowScorePose();
  for (auto& point : pose.keypoints) point = {150.0, 150.0};
  // The right arm leaves the picture: neither the outside elbow nor the shoulder-elbow link is drawn,
  // but the inside shoulder is.
  pose.keypoints[kRightShoulder] = {50.0, 50.0};
  pose.keypoints[kRightElbow] = {320.0, 50.0};
  pose.scores[kRightShoulder] = 0.95f;
  pose.scores[kRightElbow] = 0.95f;
  // A keypoint just below the threshold is not drawn.
  pose.keypoints[kNose] = {250.0, 250.0};
  pose.scores[kNose] = 0.2999f;
  sapiens::PoseDrawStyle style;
  style.boxThickness = 0;
  sapiens::drawPoses(image, {pose}, sapiens::keypoints308(), style);

  const OfficialColors colors;
  QCOMPARE(image.at<cv::Vec3b>(50, 50), colors.keypoint(kRightShoulder));
  for (int x = 70; x < 300; x += 10) QCOMPARE(image.at<cv::Vec3b>(50, x), original.at<cv::Vec3b>(50, x));
  QCOMPARE(image.at<cv::Vec3b>(250, 250), original.at<cv::Vec3b>(250, 250));
  QCOMPARE(image.at<cv::Vec3b>(150, 150), original.at<cv::Vec3b>(150, 150));
}

void TestExportOverlay::boxIsDrawnAroundThePerson() {
  const cv::Mat original(500, 500, CV_8UC3, cv::Scalar(0, 0, 0));
  cv::Mat image = original.clone();
  const sapiens::PoseDrawStyle style = sapiens::poseDrawStyleFor(image.size());
  sapiens::drawPoses(image, {lowScorePose()}, sapiens::keypoints308(), style);
  // bbox (50, 40) - (450, 460): the edges are green, inside and outside untouched.
  QCOMPARE(image.at<cv::Vec3b>(250, 50), cv::Vec3b(0, 255, 0));
  QCOMPARE(image.at<cv::Vec3b>(40, 250), cv::Vec3b(0, 255, 0));
  QCOMPARE(image.at<cv::Vec3b>(460, 450), cv::Vec3b(0, 255, 0));
  QCOMPARE(image.at<cv::Vec3b>(250, 250), cv::Vec3b(0, 0, 0));
  QCOMPARE(image.at<cv::Vec3b>(20, 20), cv::Vec3b(0, 0, 0));
}

// In a video, each person's box is in their track's colour with "#id" on a tag above its left corner.
void TestExportOverlay::trackedPeopleHaveTheirTracksColourAndId() {
  QCOMPARE(sapiens::trackColor(-1), (sapiens::Rgb{0, 255, 0}));
  for (int id = 0; id < 12; ++id) {
    for (int other = 0; other < id; ++other) {
      const sapiens::Rgb a = sapiens::trackColor(id), b = sapiens::trackColor(other);
      const int distance = std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]);
      QVERIFY2(distance > 40, qPrintable(QString("tracks %1 and %2 look alike").arg(id).arg(other)));
    }
  }
  const cv::Mat original(500, 500, CV_8UC3, cv::Scalar(0, 0, 0));
  cv::Mat image = original.clone();
  auto first = lowScorePose(), second = lowScorePose();
  first.trackId = 3;
  second.trackId = 4;
  second.bbox = {300, 200, 480, 480};
  sapiens::drawPoses(image, {first, second}, sapiens::keypoints308(),
                     sapiens::poseDrawStyleFor(image.size()));
  const auto bgr = [](int id) {
    const sapiens::Rgb rgb = sapiens::trackColor(id);
    return cv::Vec3b(rgb[2], rgb[1], rgb[0]);
  };
  QCOMPARE(image.at<cv::Vec3b>(250, 50), bgr(3));   // left edge of the first box
  QCOMPARE(image.at<cv::Vec3b>(480, 400), bgr(4));  // bottom edge of the second
  // The tag: above the first box's top-left corner (50, 40), in its colour with the id in ink over it.
  cv::Mat same;
  cv::inRange(image(cv::Rect(0, 0, 500, 40)), cv::Scalar(bgr(3)), cv::Scalar(bgr(3)), same);
  const cv::Rect tag = cv::boundingRect(same);
  QVERIFY2(tag.x == 50 && tag.y + tag.height == 40,
           qPrintable(QString("tag at %1,%2 %3x%4").arg(tag.x).arg(tag.y).arg(tag.width).arg(tag.height)));
  QVERIFY2(tag.width >= 12 && tag.height >= 10,
           qPrintable(QString("tag %1x%2").arg(tag.width).arg(tag.height)));
  const int tagColour = cv::countNonZero(same(tag));
  QVERIFY(tagColour > tag.area() / 2);
  QVERIFY(tagColour < tag.area());  // the text
  QCOMPARE(image.at<cv::Vec3b>(250, 250), cv::Vec3b(0, 0, 0));
}

void TestExportOverlay::sizesScaleWithThePicture() {
  const auto full = sapiens::poseDrawStyleFor({768, 1024});
  QCOMPARE(full.radius, 8);
  QCOMPARE(full.thickness, 8);
  const auto large = sapiens::poseDrawStyleFor({4096, 2160}, 0.5f);
  QCOMPARE(large.radius, 32);
  QCOMPARE(large.keypointThreshold, 0.5f);
  const auto tiny = sapiens::poseDrawStyleFor({48, 64});
  QCOMPARE(tiny.radius, 1);
  QCOMPARE(tiny.thickness, 1);

  // The radius is the disc's: covered just inside it, untouched just outside.
  auto pose = lowScorePose();
  pose.keypoints[kNose] = {100.0, 100.0};
  pose.scores[kNose] = 1.0f;
  for (const int radius : {3, 12}) {
    cv::Mat image(200, 200, CV_8UC3, cv::Scalar(0, 0, 0));
    sapiens::PoseDrawStyle style;
    style.radius = radius;
    style.boxThickness = 0;
    sapiens::drawPoses(image, {pose}, sapiens::keypoints308(), style);
    const cv::Vec3b nose = OfficialColors().keypoint(kNose);
    QCOMPARE(image.at<cv::Vec3b>(100, 100 + radius - 1), nose);
    QCOMPARE(image.at<cv::Vec3b>(100 - radius + 1, 100), nose);
    QCOMPARE(image.at<cv::Vec3b>(100, 100 + radius + 2), cv::Vec3b(0, 0, 0));
    QCOMPARE(image.at<cv::Vec3b>(100 + radius + 2, 100), cv::Vec3b(0, 0, 0));
  }
}

void TestExportOverlay::refusesPosesTheLayoutDoesNotDescribe() {
  cv::Mat image(64, 64, CV_8UC3, cv::Scalar(0, 0, 0));
  auto pose = lowScorePose();
  pose.keypoints.push_back({1.0, 1.0});
  pose.scores.push_back(1.0f);
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::drawPoses(image, {pose}, sapiens::keypoints308(),
                                                                     sapiens::PoseDrawStyle{}));
  cv::Mat gray(64, 64, CV_8UC1);
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                           sapiens::drawPoses(gray, {}, sapiens::keypoints308(), sapiens::PoseDrawStyle{}));
}

// The hover read-out: the part, the nearest keypoint shown at the threshold, the depth and the normal.
void TestExportOverlay::aPixelIsDescribedByEveryResult() {
  sapiens::FrameResult result;
  result.width = 8;
  result.height = 6;
  result.segLabels = cv::Mat(6, 8, CV_8UC1, cv::Scalar(0));
  result.segLabels.at<std::uint8_t>(2, 3) = 1;
  result.pointmap = cv::Mat(6, 8, CV_32FC3, cv::Scalar(0.1f, 0.2f, 2.5f));
  result.normal = cv::Mat(6, 8, CV_32FC3, cv::Scalar(0.0f, -0.6f, 0.8f));
  sapiens::PoseInstance pose = lowScorePose();
  pose.keypoints[0] = {6.5, 2.5};  // far, shown
  pose.scores[0] = 0.9f;
  pose.keypoints[1] = {3.5, 2.5};  // on the pixel, below the threshold
  pose.scores[1] = 0.2f;
  result.poses = {pose};
  const auto& names = sapiens::keypoints308().names;
  const std::vector<std::string> expected{sapiens::seg29().names[1], names[0] + " 0.90", "depth 2.50 m",
                                          "normal 0.00 -0.60 0.80"};
  QCOMPARE(sapiens::describePixel(result, 3, 2, 0.3), expected);
  // Lower the threshold and the keypoint under the cursor is the nearest.
  QCOMPARE(sapiens::describePixel(result, 3, 2, 0.1).at(1), names[1] + " 0.20");
  QVERIFY(sapiens::describePixel(result, 8, 2, 0.3).empty());
  QVERIFY(sapiens::describePixel(result, -1, 0, 0.3).empty());
  QCOMPARE(sapiens::describePixel(result, 0, 0, 0.3).front(), sapiens::seg29().names[0]);
}

QTEST_APPLESS_MAIN(TestExportOverlay)
#include "test_export_overlay.moc"
