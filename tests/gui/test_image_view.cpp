// The 2-D image view on a real GL context (Xvfb + Mesa): what is drawn where, zoom to the cursor,
// pan, fit / 1:1 keys and the hover read-out.

#include "image_view.h"
#include "surface_format.h"

#include <opencv2/core.hpp>

#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

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
               Qt::MouseButtons buttons) {
  QMouseEvent event(type, pos, widget->mapToGlobal(pos), button, buttons, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
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
