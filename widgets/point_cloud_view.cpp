#include "point_cloud_view.h"

#include "skeleton_layer.h"

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCommand.h>
#include <vtkFloatArray.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkGenericRenderWindowInteractor.h>
#include <vtkIdTypeArray.h>
#include <vtkInteractorStyleTrackballCamera.h>
#include <vtkNew.h>
#include <vtkOpenGLState.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkSmartPointer.h>
#include <vtkUnsignedCharArray.h>

#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLExtraFunctions>
#include <QWheelEvent>

#include <algorithm>
#include <cstring>

namespace sapiens::widgets {

// Everything VTK: the render window drawing into this widget's context, its interactor, the scene.
struct PointCloudView::Vtk {
  PointCloudView* view = nullptr;
  vtkNew<vtkGenericOpenGLRenderWindow> window;
  vtkNew<vtkGenericRenderWindowInteractor> interactor;
  vtkNew<vtkInteractorStyleTrackballCamera> style;
  vtkNew<vtkRenderer> renderer;
  // Shared with the PreparedCloud it came from; never changed once shown.
  vtkSmartPointer<vtkPolyData> cloud = vtkSmartPointer<vtkPolyData>::New();
  vtkNew<vtkPolyDataMapper> mapper;
  vtkNew<vtkActor> actor;
  SkeletonLayer skeletons;
  QSurface* surface = nullptr;
  bool glReady = false;
  bool inPaint = false;
  bool needsRender = true;
  int wheelRemainder = 0;

  // VTK asks for the context through events rather than owning one.
  void onWindowEvent(vtkObject*, unsigned long event, void* callData) {
    QOpenGLContext* context = view->context();
    switch (event) {
      case vtkCommand::WindowMakeCurrentEvent:
        // Only when needed: making Qt's context current again rebinds its framebuffer mid-render.
        if (context && surface && QOpenGLContext::currentContext() != context) context->makeCurrent(surface);
        break;
      case vtkCommand::WindowIsCurrentEvent:
        *static_cast<bool*>(callData) = context && QOpenGLContext::currentContext() == context;
        break;
      case vtkCommand::WindowFrameEvent:
        if (!inPaint) view->update();
        break;
      default:
        break;
    }
  }

  void onInteractorRender(vtkObject*, unsigned long, void*) {
    needsRender = true;
    view->update();
  }
};

PointCloudView::PointCloudView(QWidget* parent) : QOpenGLWidget(parent), vtk_(std::make_unique<Vtk>()) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(64, 64);
  vtk_->view = this;

  vtkGenericOpenGLRenderWindow* window = vtk_->window;
  window->SetOwnContext(false);
  window->SetReadyForRendering(false);
  window->SetMultiSamples(0);
  window->AddObserver(vtkCommand::WindowMakeCurrentEvent, vtk_.get(), &Vtk::onWindowEvent);
  window->AddObserver(vtkCommand::WindowIsCurrentEvent, vtk_.get(), &Vtk::onWindowEvent);
  window->AddObserver(vtkCommand::WindowFrameEvent, vtk_.get(), &Vtk::onWindowEvent);
  window->AddRenderer(vtk_->renderer);

  vtk_->interactor->SetRenderWindow(window);
  vtk_->interactor->SetInteractorStyle(vtk_->style);
  vtk_->interactor->EnableRenderOff();  // it asks us (RenderEvent) and we render in paintGL
  vtk_->interactor->AddObserver(vtkCommand::RenderEvent, vtk_.get(), &Vtk::onInteractorRender);
  vtk_->interactor->Initialize();

  vtk_->renderer->SetBackground(0.12, 0.12, 0.13);
  vtk_->mapper->SetInputData(vtk_->cloud);
  vtk_->mapper->SetColorModeToDirectScalars();
  vtk_->mapper->SetScalarModeToUsePointData();
  vtk_->actor->SetMapper(vtk_->mapper);
  vtk_->actor->GetProperty()->SetPointSize(2.0f);
  vtk_->actor->GetProperty()->LightingOff();
  vtk_->renderer->AddActor(vtk_->actor);
  vtk_->skeletons.attach(window, vtk_->renderer->GetActiveCamera());
  resetCamera();
}

PointCloudView::~PointCloudView() {
  // First, or Qt's context teardown calls back into a half-destroyed widget.
  disconnect(contextDestroyed_);
  releaseGl();
}

void PointCloudView::releaseGl() {
  if (!vtk_->glReady || !context()) return;
  makeCurrent();
  vtk_->window->Finalize();
  vtk_->window->SetReadyForRendering(false);
  doneCurrent();
  vtk_->glReady = false;
  vtk_->surface = nullptr;
}

// The polydata is built where prepare runs and only read afterwards: VTK's reference counts are atomic,
// so handing it to the GUI thread is safe.
struct PointCloudView::PreparedCloud {
  vtkSmartPointer<vtkPolyData> cloud = vtkSmartPointer<vtkPolyData>::New();
};

std::shared_ptr<const PointCloudView::PreparedCloud> PointCloudView::prepare(const float* xyz,
                                                                             const std::uint8_t* rgb,
                                                                             std::size_t count) {
  const auto n = static_cast<vtkIdType>(count);
  vtkNew<vtkFloatArray> coordinates;
  coordinates->SetNumberOfComponents(3);
  coordinates->SetNumberOfTuples(n);
  if (count > 0) std::memcpy(coordinates->GetPointer(0), xyz, count * 3 * sizeof(float));
  vtkNew<vtkPoints> points;
  points->SetData(coordinates);

  vtkNew<vtkUnsignedCharArray> colors;
  colors->SetName("rgb");
  colors->SetNumberOfComponents(3);
  colors->SetNumberOfTuples(n);
  if (count > 0) {
    if (rgb) {
      std::memcpy(colors->GetPointer(0), rgb, count * 3);
    } else {
      std::fill_n(colors->GetPointer(0), count * 3, std::uint8_t{255});
    }
  }

  // One vertex cell per point.
  vtkNew<vtkIdTypeArray> offsets;
  offsets->SetNumberOfTuples(n + 1);
  vtkNew<vtkIdTypeArray> connectivity;
  connectivity->SetNumberOfTuples(n);
  for (vtkIdType i = 0; i < n; ++i) {
    offsets->SetValue(i, i);
    connectivity->SetValue(i, i);
  }
  offsets->SetValue(n, n);
  vtkNew<vtkCellArray> vertices;
  vertices->SetData(offsets, connectivity);

  auto prepared = std::make_shared<PreparedCloud>();
  prepared->cloud->SetPoints(points);
  prepared->cloud->SetVerts(vertices);
  prepared->cloud->GetPointData()->SetScalars(colors);
  // Bounds are cached on first use; computing them here keeps that loop off the GUI thread too.
  prepared->cloud->ComputeBounds();
  return prepared;
}

void PointCloudView::setCloud(const std::shared_ptr<const PreparedCloud>& cloud, bool keepCamera) {
  if (!cloud) return;
  vtk_->cloud = cloud->cloud;
  vtk_->mapper->SetInputData(vtk_->cloud);
  if (!keepCamera) return resetCamera();
  vtk_->needsRender = true;
  update();
}

void PointCloudView::setPoints(const float* xyz, const std::uint8_t* rgb, std::size_t count) {
  setCloud(prepare(xyz, rgb, count));
}

std::size_t PointCloudView::pointCount() const {
  return static_cast<std::size_t>(vtk_->cloud->GetNumberOfPoints());
}

float PointCloudView::pointSize() const {
  return vtk_->actor->GetProperty()->GetPointSize();
}

void PointCloudView::setPointSize(float pixels) {
  vtk_->actor->GetProperty()->SetPointSize(pixels);
  vtk_->needsRender = true;
  update();
}

void PointCloudView::setSkeletons(const float* xyz, const std::uint8_t* rgb, std::size_t count,
                                  const std::vector<int>& joints,
                                  const std::vector<std::array<int, 2>>& bones) {
  vtk_->skeletons.set(xyz, rgb, count, joints, bones);
  vtk_->needsRender = true;
  update();
}

void PointCloudView::setSkeletonsVisible(bool visible) {
  vtk_->skeletons.setVisible(visible);
  vtk_->needsRender = true;
  update();
}

bool PointCloudView::skeletonsVisible() const {
  return vtk_->skeletons.visible();
}

std::size_t PointCloudView::skeletonPointCount() const {
  return vtk_->skeletons.pointCount();
}

std::size_t PointCloudView::skeletonJointCount() const {
  return vtk_->skeletons.jointCount();
}

std::size_t PointCloudView::skeletonBoneCount() const {
  return vtk_->skeletons.boneCount();
}

void PointCloudView::resetCamera() {
  // Seen from the capturing camera: OpenCV axes, x right, y down, z forward.
  vtkCamera* camera = vtk_->renderer->GetActiveCamera();
  camera->SetFocalPoint(0, 0, 1);
  camera->SetPosition(0, 0, 0);
  camera->SetViewUp(0, -1, 0);
  vtk_->renderer->ResetCamera();
  vtk_->needsRender = true;
  update();
}

std::array<double, 3> PointCloudView::cameraPosition() const {
  std::array<double, 3> p{};
  vtk_->renderer->GetActiveCamera()->GetPosition(p.data());
  return p;
}

std::array<double, 3> PointCloudView::cameraFocalPoint() const {
  std::array<double, 3> p{};
  vtk_->renderer->GetActiveCamera()->GetFocalPoint(p.data());
  return p;
}

void PointCloudView::initializeGL() {
  disconnect(contextDestroyed_);
  contextDestroyed_ = connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, [this] { releaseGl(); });
  vtk_->surface = context()->surface();
  vtk_->window->OpenGLInitContext();
  vtk_->window->SetReadyForRendering(true);
  vtk_->window->SetFrameBlitModeToNoBlit();  // paintGL blits into Qt's framebuffer itself
  vtk_->glReady = true;
  vtk_->needsRender = true;
}

void PointCloudView::resizeGL(int, int) {
  const qreal dpr = devicePixelRatioF();
  vtk_->interactor->UpdateSize(int(width() * dpr), int(height() * dpr));
  vtk_->window->SetDPI(int(72 * dpr));
  vtk_->needsRender = true;
}

void PointCloudView::paintGL() {
  QOpenGLExtraFunctions* f = context()->extraFunctions();
  if (!vtk_->glReady) {
    f->glClearColor(0.12f, 0.12f, 0.13f, 1.0f);
    f->glClear(GL_COLOR_BUFFER_BIT);
    return;
  }
  vtk_->inPaint = true;
  const qreal dpr = devicePixelRatioF();
  const int w = int(width() * dpr);
  const int h = int(height() * dpr);
  const int* size = vtk_->window->GetSize();
  if (size[0] != w || size[1] != h) {
    vtk_->interactor->UpdateSize(w, h);
    vtk_->needsRender = true;
  }
  if (vtk_->needsRender) {
    vtk_->window->Render();
    vtk_->needsRender = false;
  }
  // Copy VTK's display framebuffer into the widget's.
  f->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
  vtk_->window->GetState()->ResetFramebufferBindings();
  vtk_->window->GetState()->vtkglDisable(GL_SCISSOR_TEST);
  f->glDisable(GL_SCISSOR_TEST);
  vtk_->window->BlitDisplayFramebuffer(0, 0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  // Opaque alpha, or the widget composites translucent over the window.
  f->glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_TRUE);
  f->glClearColor(0, 0, 0, 1);
  f->glClear(GL_COLOR_BUFFER_BIT);
  f->glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  vtk_->inPaint = false;
  QMetaObject::invokeMethod(
      this, [this] { Q_EMIT frameRendered(); }, Qt::QueuedConnection);
}

void PointCloudView::forwardMouse(QMouseEvent* event) {
  const qreal dpr = devicePixelRatioF();
  const QPointF p = event->position() * dpr;
  const bool ctrl = event->modifiers() & Qt::ControlModifier;
  const bool shift = event->modifiers() & Qt::ShiftModifier;
  const int repeat = event->type() == QEvent::MouseButtonDblClick ? 1 : 0;
  vtk_->interactor->SetEventInformationFlipY(int(p.x()), int(p.y()), ctrl, shift, 0, repeat);
  vtk_->interactor->SetAltKey(event->modifiers() & Qt::AltModifier ? 1 : 0);

  unsigned long command = vtkCommand::NoEvent;
  const bool press =
      event->type() == QEvent::MouseButtonPress || event->type() == QEvent::MouseButtonDblClick;
  switch (event->type()) {
    case QEvent::MouseMove:
      command = vtkCommand::MouseMoveEvent;
      break;
    case QEvent::MouseButtonPress:
    case QEvent::MouseButtonDblClick:
    case QEvent::MouseButtonRelease:
      switch (event->button()) {
        case Qt::LeftButton:
          command = press ? vtkCommand::LeftButtonPressEvent : vtkCommand::LeftButtonReleaseEvent;
          break;
        case Qt::MiddleButton:
          command = press ? vtkCommand::MiddleButtonPressEvent : vtkCommand::MiddleButtonReleaseEvent;
          break;
        case Qt::RightButton:
          command = press ? vtkCommand::RightButtonPressEvent : vtkCommand::RightButtonReleaseEvent;
          break;
        default:
          break;
      }
      break;
    default:
      break;
  }
  if (command != vtkCommand::NoEvent) vtk_->interactor->InvokeEvent(command, event);
  event->accept();
}

void PointCloudView::mousePressEvent(QMouseEvent* event) {
  forwardMouse(event);
}
void PointCloudView::mouseMoveEvent(QMouseEvent* event) {
  forwardMouse(event);
}
void PointCloudView::mouseReleaseEvent(QMouseEvent* event) {
  forwardMouse(event);
}

void PointCloudView::wheelEvent(QWheelEvent* event) {
  const qreal dpr = devicePixelRatioF();
  const QPointF p = event->position() * dpr;
  vtk_->interactor->SetEventInformationFlipY(int(p.x()), int(p.y()), event->modifiers() & Qt::ControlModifier,
                                             event->modifiers() & Qt::ShiftModifier);
  // One VTK wheel step per 120 units (a notch); touchpads send smaller deltas that add up.
  vtk_->wheelRemainder += event->angleDelta().y();
  while (vtk_->wheelRemainder >= 120) {
    vtk_->interactor->InvokeEvent(vtkCommand::MouseWheelForwardEvent, event);
    vtk_->wheelRemainder -= 120;
  }
  while (vtk_->wheelRemainder <= -120) {
    vtk_->interactor->InvokeEvent(vtkCommand::MouseWheelBackwardEvent, event);
    vtk_->wheelRemainder += 120;
  }
  event->accept();
}

void PointCloudView::keyPressEvent(QKeyEvent* event) {
  if (event->key() == Qt::Key_R && event->modifiers() == Qt::NoModifier) {
    resetCamera();
    event->accept();
    return;
  }
  // Key presses reach the style (modifier state for its drags); its one-letter commands (quit, stereo,
  // wireframe, joystick) do not apply to this view, so no CharEvent is sent.
  const QByteArray text = event->text().toLatin1();
  const char code = text.size() == 1 ? text[0] : '\0';
  vtk_->interactor->SetKeyEventInformation(event->modifiers() & Qt::ControlModifier,
                                           event->modifiers() & Qt::ShiftModifier, code,
                                           event->isAutoRepeat() ? 1 : 0, nullptr);
  vtk_->interactor->InvokeEvent(vtkCommand::KeyPressEvent, event);
  QOpenGLWidget::keyPressEvent(event);
}

void PointCloudView::keyReleaseEvent(QKeyEvent* event) {
  const QByteArray text = event->text().toLatin1();
  const char code = text.size() == 1 ? text[0] : '\0';
  vtk_->interactor->SetKeyEventInformation(event->modifiers() & Qt::ControlModifier,
                                           event->modifiers() & Qt::ShiftModifier, code, 0, nullptr);
  vtk_->interactor->InvokeEvent(vtkCommand::KeyReleaseEvent, event);
  QOpenGLWidget::keyReleaseEvent(event);
}

void PointCloudView::enterEvent(QEnterEvent* event) {
  vtk_->interactor->InvokeEvent(vtkCommand::EnterEvent, event);
  QOpenGLWidget::enterEvent(event);
}

void PointCloudView::leaveEvent(QEvent* event) {
  vtk_->interactor->InvokeEvent(vtkCommand::LeaveEvent, event);
  QOpenGLWidget::leaveEvent(event);
}

}  // namespace sapiens::widgets
