// The VTK 3-D view inside Qt 6 (Xvfb + Mesa): points appear where and in the colour they should,
// the trackball camera answers drag, wheel and R, and the widget survives re-parenting and teardown.

#include "point_cloud_view.h"
#include "surface_format.h"

#include <QMouseEvent>
#include <QSignalSpy>
#include <QTest>
#include <QWheelEvent>

#include <cmath>
#include <cstdint>
#include <vector>

using sapiens::widgets::PointCloudView;

namespace {

struct Cloud {
  std::vector<float> xyz;
  std::vector<std::uint8_t> rgb;
  std::size_t count() const { return xyz.size() / 3; }
};

// A dense square of red points at depth 2 with a green column on its right edge (OpenCV axes:
// x right, y down, z forward), so orientation mistakes show.
Cloud redSquareWithGreenRightEdge() {
  Cloud cloud;
  const int n = 120;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const float x = -0.5f + float(j) / (n - 1);
      const float y = -0.5f + float(i) / (n - 1);
      cloud.xyz.insert(cloud.xyz.end(), {x, y, 2.0f});
      const bool green = j >= n - 12;
      cloud.rgb.insert(cloud.rgb.end(), {std::uint8_t(green ? 0 : 230), std::uint8_t(green ? 220 : 20), 20});
    }
  }
  return cloud;
}

QColor drawnAt(PointCloudView& view, double fx, double fy) {
  const QImage frame = view.grabFramebuffer();
  return QColor(frame.pixel(int(frame.width() * fx), int(frame.height() * fy)));
}

bool isRed(const QColor& c) {
  return c.red() > 180 && c.green() < 80 && c.blue() < 80;
}
bool isGreen(const QColor& c) {
  return c.green() > 170 && c.red() < 80 && c.blue() < 80;
}

double distance(const std::array<double, 3>& a, const std::array<double, 3>& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                   (a[2] - b[2]) * (a[2] - b[2]));
}

void sendMouse(QWidget* widget, QEvent::Type type, const QPointF& pos, Qt::MouseButton button,
               Qt::MouseButtons buttons) {
  QMouseEvent event(type, pos, widget->mapToGlobal(pos), button, buttons, Qt::NoModifier);
  QApplication::sendEvent(widget, &event);
}

}  // namespace

class TestPointCloudView : public QObject {
  Q_OBJECT

 public:
  static void initMain() { sapiens::studio::prepareOpenGl(); }

 private:
  void showCloud(PointCloudView& view) {
    view.resize(400, 300);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const Cloud cloud = redSquareWithGreenRightEdge();
    view.setPointSize(4.0f);
    QSignalSpy rendered(&view, &PointCloudView::frameRendered);
    view.setPoints(cloud.xyz.data(), cloud.rgb.data(), cloud.count());
    QVERIFY(rendered.wait(10000));
    QCOMPARE(view.pointCount(), cloud.count());
  }

 private Q_SLOTS:
  void drawsTheCloudFromTheCamerasViewpoint() {
    PointCloudView view;
    showCloud(view);
    QVERIFY2(isRed(drawnAt(view, 0.5, 0.5)), qPrintable(drawnAt(view, 0.5, 0.5).name()));
    // +x is to the right as seen from the camera: the green edge is on the right.
    bool greenOnRight = false;
    for (double fx = 0.55; fx < 1.0; fx += 0.01)
      greenOnRight = greenOnRight || isGreen(drawnAt(view, fx, 0.5));
    QVERIFY(greenOnRight);
    for (double fx = 0.05; fx < 0.5; fx += 0.01) QVERIFY(!isGreen(drawnAt(view, fx, 0.5)));
    // The background is not the cloud.
    const QColor corner = drawnAt(view, 0.01, 0.01);
    QVERIFY(!isRed(corner) && !isGreen(corner));
    QCOMPARE(corner.alpha(), 255);
  }

  void dragRotatesWheelZoomsAndRResets() {
    PointCloudView view;
    showCloud(view);
    const auto home = view.cameraPosition();
    const auto focal = view.cameraFocalPoint();

    QSignalSpy rendered(&view, &PointCloudView::frameRendered);
    sendMouse(&view, QEvent::MouseButtonPress, {200, 150}, Qt::LeftButton, Qt::LeftButton);
    for (int x = 205; x <= 300; x += 5)
      sendMouse(&view, QEvent::MouseMove, {double(x), 150}, Qt::NoButton, Qt::LeftButton);
    sendMouse(&view, QEvent::MouseButtonRelease, {300, 150}, Qt::LeftButton, Qt::NoButton);
    QVERIFY(rendered.wait(10000));
    const auto rotated = view.cameraPosition();
    QVERIFY(distance(rotated, home) > 0.1);
    // Rotation orbits the focal point: same distance to it.
    QVERIFY(std::abs(distance(rotated, focal) - distance(home, focal)) < 1e-6 * distance(home, focal) + 1e-9);

    const double before = distance(view.cameraPosition(), view.cameraFocalPoint());
    QWheelEvent wheel(QPointF(200, 150), view.mapToGlobal(QPointF(200, 150)), QPoint(), QPoint(0, 240),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&view, &wheel);
    QVERIFY(distance(view.cameraPosition(), view.cameraFocalPoint()) < before * 0.9);

    view.setFocus();
    QTest::keyClick(&view, Qt::Key_R);
    QVERIFY(distance(view.cameraPosition(), home) < 1e-6);
    QVERIFY(rendered.wait(10000));
    QVERIFY(isRed(drawnAt(view, 0.5, 0.5)));
  }

  void survivesReparentingAndRedraws() {
    auto* view = new PointCloudView;
    showCloud(*view);
    QWidget host;
    host.resize(500, 400);
    host.show();
    QVERIFY(QTest::qWaitForWindowExposed(&host));
    view->setParent(&host);
    view->setGeometry(50, 50, 400, 300);
    view->show();
    QSignalSpy rendered(view, &PointCloudView::frameRendered);
    view->resetCamera();
    QVERIFY(rendered.wait(10000));
    QVERIFY(isRed(drawnAt(*view, 0.5, 0.5)));
    // Two views in one window.
    PointCloudView second(&host);
    second.setGeometry(0, 0, 40, 40);
    second.show();
    const Cloud cloud = redSquareWithGreenRightEdge();
    QSignalSpy secondRendered(&second, &PointCloudView::frameRendered);
    second.setPoints(cloud.xyz.data(), cloud.rgb.data(), cloud.count());
    QVERIFY(secondRendered.wait(10000));
    delete view;  // torn down while its window lives on
    QTest::qWait(50);
    QVERIFY(isRed(drawnAt(second, 0.5, 0.5)));
  }

  void emptyCloudDrawsBackground() {
    PointCloudView view;
    view.resize(200, 150);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QSignalSpy rendered(&view, &PointCloudView::frameRendered);
    view.setPoints(nullptr, nullptr, 0);
    QVERIFY(rendered.wait(10000));
    QCOMPARE(view.pointCount(), std::size_t{0});
    const QColor centre = drawnAt(view, 0.5, 0.5);
    QVERIFY(std::abs(centre.red() - 31) <= 3 && std::abs(centre.blue() - 33) <= 3);
  }
};

QTEST_MAIN(TestPointCloudView)
#include "test_point_cloud_view.moc"
