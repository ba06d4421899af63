#pragma once
// The 3-D view: coloured points drawn by VTK inside a QOpenGLWidget. Debian's VTK Qt module is built
// on Qt 5, so this widget bridges a vtkGenericOpenGLRenderWindow to Qt 6's context itself (see
// docs: stack notes, "VTK 9.1 inside Qt 6"). Trackball camera: left drag rotates, middle drag (or
// shift + left) pans, wheel and right drag zoom, R resets the camera.

#include <QOpenGLWidget>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace sapiens::widgets {

class PointCloudView : public QOpenGLWidget {
  Q_OBJECT

 public:
  explicit PointCloudView(QWidget* parent = nullptr);
  ~PointCloudView() override;

  /// A cloud copied into VTK's arrays, ready to be shown. Building one costs time in proportion to the
  /// points, so it is done on any thread but the GUI's; showing it is then a pointer swap.
  struct PreparedCloud;
  /// `count` points, xyz as 3 floats each, rgb as 3 bytes each (nullptr: white); the data is copied.
  /// Thread-safe.
  static std::shared_ptr<const PreparedCloud> prepare(const float* xyz, const std::uint8_t* rgb,
                                                      std::size_t count);
  /// Replaces the cloud with `cloud` (from prepare); resets the camera to frame it unless `keepCamera`
  /// (the same points in other colours).
  void setCloud(const std::shared_ptr<const PreparedCloud>& cloud, bool keepCamera = false);
  /// prepare + setCloud, on the calling (GUI) thread.
  void setPoints(const float* xyz, const std::uint8_t* rgb, std::size_t count);
  std::size_t pointCount() const;
  void setPointSize(float pixels);
  float pointSize() const;
  /// People's skeletons over the cloud (SkeletonLayer): `count` points (xyz floats, rgb bytes each),
  /// `joints` the points drawn, `bones` pairs of points. Replaces the previous ones.
  void setSkeletons(const float* xyz, const std::uint8_t* rgb, std::size_t count,
                    const std::vector<int>& joints, const std::vector<std::array<int, 2>>& bones);
  void setSkeletonsVisible(bool visible);
  bool skeletonsVisible() const;
  std::size_t skeletonPointCount() const;
  std::size_t skeletonJointCount() const;
  std::size_t skeletonBoneCount() const;
  /// Frames the whole cloud, looking along -z with +y up (the camera convention of pointmaps).
  void resetCamera();

  std::array<double, 3> cameraPosition() const;
  std::array<double, 3> cameraFocalPoint() const;

 Q_SIGNALS:
  /// VTK finished drawing a frame into the widget.
  void frameRendered();

 protected:
  void initializeGL() override;
  void resizeGL(int width, int height) override;
  void paintGL() override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void keyReleaseEvent(QKeyEvent* event) override;
  void enterEvent(QEnterEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  struct Vtk;
  void releaseGl();
  void forwardMouse(QMouseEvent* event);

  std::unique_ptr<Vtk> vtk_;
  QMetaObject::Connection contextDestroyed_;
};

}  // namespace sapiens::widgets
