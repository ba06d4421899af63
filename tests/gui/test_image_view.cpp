// The 2-D image view on a real GL context (Xvfb + Mesa): what is drawn where, zoom to the cursor,
// pan, fit / 1:1 keys, the hover read-out, the comparison modes and person box editing.

#include "image_view.h"
#include "surface_format.h"

#include <opencv2/core.hpp>

#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

using sapiens::widgets::ImageView;

namespace {

// Every pixel distinct: B = x, G = y, R = a mix of both.
cv::Mat codedImage(int width, int height) {
  cv::Mat image(height, width, CV_8UC3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      image.at<cv::Vec3b>(y, x) = cv::Vec3b(uchar(x), uchar(y), uchar((x * 7 + y * 13) % 256));
    }
  }
  return image;
}

void sendWheel(QWidget* widget, const QPointF& pos, int angleDelta) {
  QWheelEvent event(pos, widget->mapToGlobal(pos), QPoint(), QPoint(0, angleDelta), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(widget, &event);
}

void sendMouse(QWidget* widget, QEvent::Type type, const QPointF& pos, Qt::MouseButton button,
               Qt::MouseButtons buttons, Qt::KeyboardModifiers modifiers = Qt::NoModifier) {
  QMouseEvent event(type, pos, widget->mapToGlobal(pos), button, buttons, modifiers);
  QApplication::sendEvent(widget, &event);
}

cv::Vec3b bgrOf(const QImage& frame, const QPointF& pos, qreal dpr) {
  const QRgb rgb = frame.pixel(int(pos.x() * dpr), int(pos.y() * dpr));
  return cv::Vec3b(uchar(qBlue(rgb)), uchar(qGreen(rgb)), uchar(qRed(rgb)));
}

int distance(const cv::Vec3b& a, const cv::Vec3b& b) {
  return std::max({std::abs(a[0] - b[0]), std::abs(a[1] - b[1]), std::abs(a[2] - b[2])});
}

// Mask layer: class 1 everywhere, drawn opaque in pure red (BGR 0 0 255).
const cv::Vec3b kMaskRed(0, 0, 255);

void coverWithRedMask(ImageView& view) {
  view.setMaskLayer(cv::Mat(view.image().rows, view.image().cols, CV_8UC1, cv::Scalar(1)));
  view.setMaskPalette({QColor(0, 0, 0, 0), QColor(255, 0, 0)});
  view.setMaskOpacity(1.0);
}

sapiens::PoseInstance personInBox(float x1, float y1, float x2, float y2) {
  sapiens::PoseInstance pose;
  pose.bbox = {x1, y1, x2, y2};
  pose.bboxSource = "user";
  return pose;
}

// The colour the framebuffer holds at widget position `pos` (logical pixels).
cv::Vec3b drawnBgr(ImageView& view, const QPointF& pos) {
  const QImage frame = view.grabFramebuffer();
  const qreal dpr = view.devicePixelRatioF();
  const QRgb rgb = frame.pixel(int(pos.x() * dpr), int(pos.y() * dpr));
  return cv::Vec3b(uchar(qBlue(rgb)), uchar(qGreen(rgb)), uchar(qRed(rgb)));
}

bool near(const QPointF& a, const QPointF& b, double tolerance) {
  return std::abs(a.x() - b.x()) <= tolerance && std::abs(a.y() - b.y()) <= tolerance;
}

}  // namespace

class TestImageView : public QObject {
  Q_OBJECT

 public:
  static void initMain() { sapiens::studio::prepareOpenGl(); }

 private:
  // A 200 x 100 coded image in a 400 x 300 view: fit zoom is 2.
  void showCodedImage(ImageView& view) {
    view.resize(400, 300);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy shown(&view, &ImageView::imageShown);
    view.setImage(codedImage(200, 100));
    QVERIFY(shown.wait(10000));
  }

  // Every image pixel of row `y` left of `dividerX` is drawn as it is (zoom >= 2: nearest), every one
  // right of it in the mask's red; the divider's own few pixels are not judged.
  void checkRowSplitAt(ImageView& view, double dividerX, int y) {
    const QImage frame = view.grabFramebuffer();
    const qreal dpr = view.devicePixelRatioF();
    int imagePixels = 0, maskPixels = 0;
    for (int x = 0; x < view.width(); ++x) {
      if (std::abs(x + 0.5 - dividerX) < 6) continue;
      const QPointF centre(x + 0.5, y + 0.5);
      const QPointF at = view.widgetToImage(centre);
      if (at.x() < 0 || at.y() < 0 || at.x() >= view.image().cols || at.y() >= view.image().rows) continue;
      const cv::Vec3b drawn = bgrOf(frame, centre, dpr);
      if (x + 0.5 < dividerX) {
        const cv::Vec3b expected = view.image().at<cv::Vec3b>(int(at.y()), int(at.x()));
        QVERIFY2(drawn == expected, qPrintable(QStringLiteral("x %1: drawn %2 %3 %4, image %5 %6 %7")
                                                   .arg(x)
                                                   .arg(drawn[0])
                                                   .arg(drawn[1])
                                                   .arg(drawn[2])
                                                   .arg(expected[0])
                                                   .arg(expected[1])
                                                   .arg(expected[2])));
        ++imagePixels;
      } else {
        QVERIFY2(
            drawn == kMaskRed,
            qPrintable(
                QStringLiteral("x %1: drawn %2 %3 %4").arg(x).arg(drawn[0]).arg(drawn[1]).arg(drawn[2])));
        ++maskPixels;
      }
    }
    QVERIFY(imagePixels > 0 || dividerX <= 6);
    QVERIFY(maskPixels > 0 || dividerX >= view.width() - 6);
  }

 private Q_SLOTS:
  void fitsANewImageCentred() {
    ImageView view;
    showCodedImage(view);
    QCOMPARE(view.zoom(), 2.0);
    QVERIFY(view.fitsToView());
    QVERIFY(near(view.imageToWidget({0, 0}), {0, 50}, 1e-9));
    QVERIFY(near(view.imageToWidget({200, 100}), {400, 250}, 1e-9));
  }

  void drawsEachImagePixelWhereItBelongs() {
    ImageView view;
    showCodedImage(view);
    view.zoomAt({200, 150}, 2.0);  // zoom 4: crisp pixels, 4 x 4 screen pixels each
    const cv::Mat& image = view.image();
    for (const QPointF probe : {QPointF(12, 70), QPointF(201, 149), QPointF(390, 230)}) {
      const QPointF at = view.widgetToImage(probe + QPointF(0.5, 0.5));
      const cv::Vec3b expected = image.at<cv::Vec3b>(int(at.y()), int(at.x()));
      const cv::Vec3b drawn = drawnBgr(view, probe);
      QVERIFY2(drawn == expected,
               qPrintable(QStringLiteral("at widget (%1, %2), image (%3, %4): drawn BGR %5 %6 %7, "
                                         "expected %8 %9 %10")
                              .arg(probe.x())
                              .arg(probe.y())
                              .arg(at.x())
                              .arg(at.y())
                              .arg(drawn[0])
                              .arg(drawn[1])
                              .arg(drawn[2])
                              .arg(expected[0])
                              .arg(expected[1])
                              .arg(expected[2])));
    }
    // Outside the image: the background, not image colours.
    view.fitToView();
    QCOMPARE(drawnBgr(view, {200, 20}), drawnBgr(view, {5, 290}));
    QVERIFY(drawnBgr(view, {200, 20}) != image.at<cv::Vec3b>(0, 100));
  }

  void wheelZoomKeepsThePointUnderTheCursor() {
    ImageView view;
    showCodedImage(view);
    QSignalSpy zoomed(&view, &ImageView::zoomChanged);
    const QPointF cursor(123, 77);
    const QPointF before = view.widgetToImage(cursor);
    sendWheel(&view, cursor, 120);
    QCOMPARE(zoomed.count(), 1);
    QVERIFY(std::abs(view.zoom() - 2.0 * std::pow(2.0, 0.25)) < 1e-9);
    QVERIFY(!view.fitsToView());
    QVERIFY(near(view.widgetToImage(cursor), before, 1e-9));

    sendWheel(&view, cursor, -360);  // three notches back out
    QVERIFY(view.zoom() < 2.0);
    QVERIFY(near(view.widgetToImage(cursor), before, 1e-9));

    // The drawn pixel under the cursor is still the image pixel that was there.
    view.zoomAt(cursor, 8.0);
    const cv::Vec3b expected = view.image().at<cv::Vec3b>(int(before.y()), int(before.x()));
    QCOMPARE(drawnBgr(view, cursor), expected);
  }

  void zoomStaysWithinLimits() {
    ImageView view;
    showCodedImage(view);
    for (int i = 0; i < 60; ++i) sendWheel(&view, {200, 150}, 120);
    QCOMPARE(view.zoom(), ImageView::kMaxZoom);
    for (int i = 0; i < 120; ++i) sendWheel(&view, {200, 150}, -120);
    QCOMPARE(view.zoom(), ImageView::kMinZoom);
  }

  void dragPansTheImage() {
    ImageView view;
    showCodedImage(view);
    const QPointF corner = view.imageToWidget({0, 0});
    sendMouse(&view, QEvent::MouseButtonPress, {100, 100}, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseMove, {115, 95}, Qt::NoButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseMove, {130, 90}, Qt::NoButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {130, 90}, Qt::LeftButton, Qt::NoButton);
    QVERIFY(near(view.imageToWidget({0, 0}), corner + QPointF(30, -10), 1e-9));
    QCOMPARE(view.zoom(), 2.0);
    QVERIFY(!view.fitsToView());
    // Moving without a button held does not pan.
    sendMouse(&view, QEvent::MouseMove, {10, 10}, Qt::NoButton, Qt::NoButton);
    QVERIFY(near(view.imageToWidget({0, 0}), corner + QPointF(30, -10), 1e-9));
  }

  void keysFitAndShowActualSize() {
    ImageView view;
    showCodedImage(view);
    view.setFocus();
    const QPointF centreBefore = view.widgetToImage({200, 150});
    QTest::keyClick(&view, Qt::Key_1);
    QCOMPARE(view.zoom(), 1.0);
    QVERIFY(near(view.widgetToImage({200, 150}), centreBefore, 1e-9));
    QTest::keyClick(&view, Qt::Key_F);
    QCOMPARE(view.zoom(), 2.0);
    QVERIFY(view.fitsToView());
    // Fit follows the view's size.
    view.resize(200, 300);
    QTRY_COMPARE(view.zoom(), 1.0);
    QVERIFY(near(view.imageToWidget({0, 0}), {0, 100}, 1e-9));
  }

  void hoverReportsPixelAndColour() {
    ImageView view;
    showCodedImage(view);
    QSignalSpy hovered(&view, &ImageView::pixelHovered);
    QSignalSpy left(&view, &ImageView::hoverLeft);
    sendMouse(&view, QEvent::MouseMove, {21, 91}, Qt::NoButton, Qt::NoButton);  // image (10.5, 20.5)
    QCOMPARE(hovered.count(), 1);
    QCOMPARE(hovered.at(0).at(0).toPoint(), QPoint(10, 20));
    const QColor color = hovered.at(0).at(1).value<QColor>();
    QCOMPARE(color.blue(), 10);
    QCOMPARE(color.green(), 20);
    QCOMPARE(color.red(), (10 * 7 + 20 * 13) % 256);
    sendMouse(&view, QEvent::MouseMove, {200, 10}, Qt::NoButton, Qt::NoButton);  // above the image
    QCOMPARE(hovered.count(), 1);
    QCOMPARE(left.count(), 1);
  }

  void blendDrawsTheLayersOverTheWholeImage() {
    ImageView view;
    showCodedImage(view);
    QCOMPARE(view.compareMode(), ImageView::CompareMode::Blend);
    coverWithRedMask(view);
    checkRowSplitAt(view, 0.0, 150);
    view.setMaskVisible(false);
    checkRowSplitAt(view, view.width(), 150);
  }

  void splitShowsTheImageLeftOfTheDividerAndTheLayersRightOfIt() {
    ImageView view;
    showCodedImage(view);  // zoom 2: the image fills the view's width
    coverWithRedMask(view);
    QSignalSpy modeChanged(&view, &ImageView::compareModeChanged);
    view.setCompareMode(ImageView::CompareMode::Split);
    QCOMPARE(modeChanged.count(), 1);
    view.setSplitPosition(0.5);
    checkRowSplitAt(view, 200.0, 150);
    checkRowSplitAt(view, 200.0, 60);

    // Dragging the divider moves the boundary, and does not pan the image.
    const QPointF corner = view.imageToWidget({0, 0});
    QSignalSpy moved(&view, &ImageView::splitPositionMoved);
    sendMouse(&view, QEvent::MouseButtonPress, {201, 150}, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseMove, {150, 150}, Qt::NoButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseMove, {100, 150}, Qt::NoButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {100, 150}, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(moved.count(), 2);
    QCOMPARE(view.splitPosition(), 0.25);
    QCOMPARE(view.imageToWidget({0, 0}), corner);
    checkRowSplitAt(view, 100.0, 150);

    // Away from the divider a drag still pans, and the divider stays where it is on screen.
    sendMouse(&view, QEvent::MouseButtonPress, {300, 150}, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseMove, {310, 150}, Qt::NoButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {310, 150}, Qt::LeftButton, Qt::NoButton);
    QVERIFY(near(view.imageToWidget({0, 0}), corner + QPointF(10, 0), 1e-9));
    QCOMPARE(view.splitPosition(), 0.25);
    checkRowSplitAt(view, 100.0, 150);
  }

  void sideBySideShowsTheImageAndTheLayersWithOneZoomAndPan() {
    ImageView view;
    view.resize(804, 300);  // two 400-pixel panes and a 4-pixel gap: fit zoom 2 again
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy shown(&view, &ImageView::imageShown);
    view.setImage(codedImage(200, 100));
    QVERIFY(shown.wait(10000));
    coverWithRedMask(view);
    view.setCompareMode(ImageView::CompareMode::SideBySide);
    QCOMPARE(view.paneRect(ImageView::Pane::Image), QRectF(0, 0, 400, 300));
    QCOMPARE(view.paneRect(ImageView::Pane::Layers), QRectF(404, 0, 400, 300));
    QCOMPARE(view.zoom(), 2.0);

    auto checkPanes = [&](const QList<QPointF>& imagePoints) {
      const QImage frame = view.grabFramebuffer();
      const qreal dpr = view.devicePixelRatioF();
      for (const QPointF& point : imagePoints) {
        const QPointF left = view.imageToWidget(point, ImageView::Pane::Image);
        const QPointF right = view.imageToWidget(point, ImageView::Pane::Layers);
        QCOMPARE(right - left, QPointF(404, 0));
        QVERIFY(near(view.widgetToImage(left), point, 1e-9));
        QVERIFY(near(view.widgetToImage(right), point, 1e-9));
        QCOMPARE(bgrOf(frame, left, dpr), view.image().at<cv::Vec3b>(int(point.y()), int(point.x())));
        QCOMPARE(bgrOf(frame, right, dpr), kMaskRed);
      }
    };
    checkPanes({{10.5, 10.5}, {100.5, 50.5}, {190.5, 90.5}});

    // Zooming in the right pane zooms both, about the point under the cursor.
    const QPointF cursor(604, 150);
    const QPointF under = view.widgetToImage(cursor);
    sendWheel(&view, cursor, 480);  // x2
    QCOMPARE(view.zoom(), 4.0);
    QVERIFY(near(view.widgetToImage(cursor), under, 1e-9));
    QVERIFY(near(view.imageToWidget(under, ImageView::Pane::Image), cursor - QPointF(404, 0), 1e-9));
    checkPanes({{90.5, 40.5}, {110.5, 60.5}});

    // Panning the left pane pans both.
    sendMouse(&view, QEvent::MouseButtonPress, {200, 150}, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseMove, {220, 140}, Qt::NoButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {220, 140}, Qt::LeftButton, Qt::NoButton);
    QVERIFY(near(view.imageToWidget(under, ImageView::Pane::Layers), cursor + QPointF(20, -10), 1e-9));
    checkPanes({{90.5, 40.5}, {100.5, 50.5}});

    // Back to blending: one pane the width of the view.
    view.setCompareMode(ImageView::CompareMode::Blend);
    QCOMPARE(view.paneRect(ImageView::Pane::Layers), QRectF(0, 0, 804, 300));
  }

  void shiftDragDrawsAPersonBoxAndDeleteRemovesTheSelectedOne() {
    ImageView view;
    showCodedImage(view);  // zoom 2, image (0, 0) at widget (0, 50)
    QSignalSpy drawn(&view, &ImageView::personBoxDrawn);
    const QPointF corner = view.imageToWidget({0, 0});
    sendMouse(&view, QEvent::MouseButtonPress, {20, 70}, Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(&view, QEvent::MouseMove, {80, 110}, Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(&view, QEvent::MouseMove, {120, 150}, Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
    // The box being drawn is on screen.
    QVERIFY(distance(drawnBgr(view, {70, 70}), view.image().at<cv::Vec3b>(10, 35)) > 30);
    sendMouse(&view, QEvent::MouseButtonRelease, {120, 150}, Qt::LeftButton, Qt::NoButton, Qt::ShiftModifier);
    QCOMPARE(drawn.count(), 1);
    QCOMPARE(drawn.at(0).at(0).toRectF(), QRectF(10, 10, 50, 40));
    QCOMPARE(view.imageToWidget({0, 0}), corner);  // drawing does not pan

    // A sketch beyond the image is clipped to it; a tiny one is a slip and reports nothing.
    sendMouse(&view, QEvent::MouseButtonPress, {300, 200}, Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(&view, QEvent::MouseMove, {420, 290}, Qt::NoButton, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(&view, QEvent::MouseButtonRelease, {420, 290}, Qt::LeftButton, Qt::NoButton, Qt::ShiftModifier);
    QCOMPARE(drawn.count(), 2);
    QCOMPARE(drawn.at(1).at(0).toRectF(), QRectF(150, 75, 50, 25));
    sendMouse(&view, QEvent::MouseButtonPress, {300, 200}, Qt::LeftButton, Qt::LeftButton, Qt::ShiftModifier);
    sendMouse(&view, QEvent::MouseButtonRelease, {301, 201}, Qt::LeftButton, Qt::NoButton, Qt::ShiftModifier);
    QCOMPARE(drawn.count(), 2);

    // A click selects the innermost box under it, drawn in the selection colour; Delete asks to remove it.
    view.setPoses({personInBox(0, 0, 199, 99), personInBox(10, 10, 60, 50)});
    QSignalSpy selected(&view, &ImageView::selectedBoxChanged);
    sendMouse(&view, QEvent::MouseButtonPress, {60, 110}, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {60, 110}, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(view.selectedBox(), 1);
    QCOMPARE(selected.count(), 1);
    const cv::Vec3b selectionColour(0, 200, 255);
    QVERIFY(distance(drawnBgr(view, view.imageToWidget({10, 30})), selectionColour) <= 8);
    QVERIFY(distance(drawnBgr(view, view.imageToWidget({0, 30})), cv::Vec3b(0, 255, 0)) <= 8);
    QSignalSpy deleteAsked(&view, &ImageView::personBoxDeleteRequested);
    view.setFocus();
    QTest::keyClick(&view, Qt::Key_Delete);
    QCOMPARE(deleteAsked.count(), 1);
    QCOMPARE(deleteAsked.at(0).at(0).toInt(), 1);

    // Inside the big box only: that one. Outside every box: none, and Delete asks nothing.
    sendMouse(&view, QEvent::MouseButtonPress, {300, 200}, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {300, 200}, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(view.selectedBox(), 0);
    sendMouse(&view, QEvent::MouseButtonPress, {200, 20}, Qt::LeftButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {200, 20}, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(view.selectedBox(), -1);
    QTest::keyClick(&view, Qt::Key_Delete);
    QCOMPARE(deleteAsked.count(), 1);

    // New poses (a re-run) clear the selection.
    view.selectBox(1);
    view.setPoses({personInBox(0, 0, 199, 99)});
    QCOMPARE(view.selectedBox(), -1);
  }

  void survivesReparenting() {
    QWidget other;
    other.resize(400, 300);
    auto* view = new ImageView;  // owned by `other` once re-parented
    showCodedImage(*view);
    other.show();
    QVERIFY(QTest::qWaitForWindowExposed(&other));
    QSignalSpy shown(view, &ImageView::imageShown);
    view->setParent(&other);
    view->setGeometry(0, 0, 400, 300);
    view->show();
    view->setImage(codedImage(200, 100));
    QVERIFY(shown.wait(10000));
    view->zoomAt({200, 150}, 2.0);
    const QPointF at = view->widgetToImage({200.5, 150.5});
    QCOMPARE(drawnBgr(*view, {200, 150}), view->image().at<cv::Vec3b>(int(at.y()), int(at.x())));
  }
};

QTEST_MAIN(TestImageView)
#include "test_image_view.moc"
