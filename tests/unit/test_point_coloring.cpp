// What the 3-D view colours points by: normals as (n + 1) / 2, depth on the turbo map from the nearest
// (dark blue) to the farthest (dark red) point, the body part of the official seg palette under each
// point, and the picture's colours left as they are.

#include "sapiens/export/point_coloring.h"
#include "sapiens/result/seg_classes.h"

#include <QtTest>

using namespace sapiens;

namespace {

// Three points of a 3-pixel-wide picture, at depths 1, 2 and 3.
PointCloud threePoints() {
  PointCloud cloud;
  cloud.positions = {0, 0, 1, 0, 0, 2, 0, 0, 3};
  cloud.normals = {0, 0, -1, 1, 0, 0, 0, 1, 0};
  cloud.colors = {10, 20, 30, 40, 50, 60, 70, 80, 90};
  cloud.pixels = {0, 1, 2};
  return cloud;
}

}  // namespace

class TestPointColoring : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void eachModeColoursAsItSays() {
    PointCloud cloud = threePoints();
    colorPointCloud(cloud, PointColoring::Picture, {}, 3);
    QCOMPARE(cloud.colors, threePoints().colors);

    colorPointCloud(cloud, PointColoring::Normal, {}, 3);
    QCOMPARE(cloud.colors, (std::vector<std::uint8_t>{128, 128, 0, 255, 128, 128, 128, 255, 128}));

    colorPointCloud(cloud, PointColoring::Depth, {}, 3);
    // turbo: the nearest blue-ish (blue > red), the farthest red-ish (red > blue), the middle greenish.
    QVERIFY(cloud.colors[2] > cloud.colors[0]);
    QVERIFY(cloud.colors[6] > cloud.colors[8]);
    QVERIFY(cloud.colors[4] > cloud.colors[3] && cloud.colors[4] > cloud.colors[5]);

    cv::Mat labels(1, 3, CV_8UC1);
    labels.at<std::uint8_t>(0, 0) = 0, labels.at<std::uint8_t>(0, 1) = 3, labels.at<std::uint8_t>(0, 2) = 28;
    colorPointCloud(cloud, PointColoring::BodyPart, labels, 3);
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c)
        QCOMPARE(cloud.colors[std::size_t(i * 3 + c)],
                 seg29().palette[labels.at<std::uint8_t>(0, i)][std::size_t(c)]);
    colorPointCloud(cloud, PointColoring::BodyPart, {}, 3);  // no seg result: grey
    QCOMPARE(cloud.colors, std::vector<std::uint8_t>(9, 128));

    QCOMPARE(parsePointColoring("body-part"), std::optional<PointColoring>(PointColoring::BodyPart));
    QVERIFY(!parsePointColoring("rainbow"));
    PointCloud bare = threePoints();
    bare.normals.clear();
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, colorPointCloud(bare, PointColoring::Normal, {}, 3));
  }
};

QTEST_GUILESS_MAIN(TestPointColoring)
#include "test_point_coloring.moc"
