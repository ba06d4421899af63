// Person boxes for top-down pose: from segmentation, user input, the HOG detector, the whole image.

#include "sapiens/pipeline/person_boxes.h"

#include "test_support.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QElapsedTimer>
#include <QtTest>

#include <cmath>

using namespace sapiens;

class PersonBoxesTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void twoPeopleGiveTwoBoxesLargestFirst() {
    cv::Mat labels(400, 600, CV_8UC1, cv::Scalar(0));
    cv::rectangle(labels, cv::Rect(50, 40, 100, 300), cv::Scalar(22), cv::FILLED);   // person A
    cv::rectangle(labels, cv::Rect(350, 100, 150, 250), cv::Scalar(3), cv::FILLED);  // person B, larger
    cv::circle(labels, cv::Point(300, 20), 2, cv::Scalar(5), cv::FILLED);            // speck: dropped
    auto boxes = boxesFromSegmentation(labels);
    QCOMPARE(boxes.size(), size_t(2));
    QCOMPARE(boxes[0].x1, 350.f);
    QCOMPARE(boxes[0].y1, 100.f);
    QCOMPARE(boxes[0].x2, 499.f);
    QCOMPARE(boxes[0].y2, 349.f);
    QCOMPARE(boxes[1].x1, 50.f);
    QCOMPARE(boxes[1].y2, 339.f);
  }

  void partsSeparatedByAThinGapStayOnePerson() {
    cv::Mat labels(400, 400, CV_8UC1, cv::Scalar(0));
    cv::rectangle(labels, cv::Rect(150, 50, 100, 200), cv::Scalar(22), cv::FILLED);  // torso
    cv::rectangle(labels, cv::Rect(254, 60, 30, 150), cv::Scalar(16), cv::FILLED);   // arm, 4 px away
    auto boxes = boxesFromSegmentation(labels);
    QCOMPARE(boxes.size(), size_t(1));
    QCOMPARE(boxes[0].x1, 150.f);
    QCOMPARE(boxes[0].x2, 283.f);
  }

  void aHugeMaskIsMeasuredQuicklyAndItsBoxesScaledBack() {
    // 12000 x 9000: at full size the closing (a 300 px ellipse) took minutes; measured at 2048 px the
    // boxes hold their people to within one reduced pixel (6 px here).
    cv::Mat labels(9000, 12000, CV_8UC1, cv::Scalar(0));
    cv::rectangle(labels, cv::Rect(1000, 800, 2000, 7000), cv::Scalar(22), cv::FILLED);
    cv::rectangle(labels, cv::Rect(7001, 2003, 3000, 6000), cv::Scalar(3), cv::FILLED);
    QElapsedTimer timer;
    timer.start();
    const auto boxes = boxesFromSegmentation(labels);
    QVERIFY2(timer.elapsed() < 20000, qPrintable(QString("%1 ms").arg(timer.elapsed())));
    QCOMPARE(boxes.size(), size_t(2));
    const auto near = [](float got, float expected) { return std::abs(got - expected) <= 6.f; };
    QVERIFY(near(boxes[0].x1, 7001) && near(boxes[0].y1, 2003) && near(boxes[0].x2, 10000) &&
            near(boxes[0].y2, 8002));
    QVERIFY(near(boxes[1].x1, 1000) && near(boxes[1].y1, 800) && near(boxes[1].x2, 2999) &&
            near(boxes[1].y2, 7799));
    QVERIFY(boxes[0].x1 <= 7001 && boxes[0].x2 >= 10000 && boxes[1].y1 <= 800 && boxes[1].y2 >= 7799);
  }

  void emptySegmentationFallsThroughToTheWholeImage() {
    cv::Mat image(120, 90, CV_8UC3, cv::Scalar(30, 30, 30));
    cv::Mat labels(120, 90, CV_8UC1, cv::Scalar(0));
    PersonBoxRequest request;
    request.segLabels = &labels;
    auto boxes = choosePersonBoxes(image, request);
    QCOMPARE(boxes.size(), size_t(1));
    QCOMPARE(QString::fromStdString(boxes[0].source), QString("full-image"));
    QCOMPARE(boxes[0].box.x2, 89.f);
    QCOMPARE(boxes[0].box.y2, 119.f);
  }

  void userBoxesWin() {
    cv::Mat image(100, 100, CV_8UC3, cv::Scalar(0, 0, 0));
    cv::Mat labels(100, 100, CV_8UC1, cv::Scalar(1));
    PersonBoxRequest request;
    request.userBoxes = {parseBox("10,20,30,40")};
    request.segLabels = &labels;
    auto boxes = choosePersonBoxes(image, request);
    QCOMPARE(boxes.size(), size_t(1));
    QCOMPARE(QString::fromStdString(boxes[0].source), QString("user"));
    QCOMPARE(boxes[0].box.y2, 40.f);
  }

  void malformedBoxTextIsRefused() {
    for (const char* text : {"", "1,2,3", "1,2,3,4,5", "a,b,c,d", "10,10,5,20", "0,0,nan,4"}) {
      bool threw = false;
      try {
        parseBox(text);
      } catch (const std::invalid_argument& e) {
        threw = QString(e.what()).contains("bounding box");
      }
      QVERIFY2(threw, text);
    }
  }

  void detectorBoxesLieInsideTheImage() {
    cv::Mat image = cv::imread(test::resource("samples/astronaut.png"));
    QVERIFY(!image.empty());
    for (const auto& b : detectPeopleHog(image)) {
      QVERIFY(b.x1 >= 0 && b.y1 >= 0 && b.x2 <= image.cols - 1 && b.y2 <= image.rows - 1);
      QVERIFY(b.x2 > b.x1 && b.y2 > b.y1);
    }
    QVERIFY(detectPeopleHog(cv::Mat(50, 30, CV_8UC3, cv::Scalar(0))).empty());
  }

  // A box drawn over the picture in the studio: whole pixels, inside the picture, or refused.
  void aDrawnBoxIsClippedToWholePixelsOfThePicture() {
    const sapiens::BoundingBox box = sapiens::drawnBox(-3.5, 10.2, 130.7, 40.9, 100, 80);
    QCOMPARE(box.x1, 0.0f);
    QCOMPARE(box.y1, 10.0f);
    QCOMPARE(box.x2, 99.0f);  // inclusive corner: the last column
    QCOMPARE(box.y2, 41.0f);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::drawnBox(120, 10, 150, 20, 100, 80));
    sapiens::FrameResult result;
    for (float x : {1.0f, 2.0f, 3.0f}) {
      sapiens::PoseInstance pose;
      pose.bbox = {x, 0, x + 10, 10};
      result.poses.push_back(pose);
    }
    QCOMPARE(sapiens::poseBoxes(result).size(), std::size_t{3});
    const auto kept = sapiens::poseBoxes(result, 1);
    QVERIFY(kept.size() == 2 && kept[0].x1 == 1.0f && kept[1].x1 == 3.0f);
  }
};

QTEST_APPLESS_MAIN(PersonBoxesTest)
#include "test_person_boxes.moc"
