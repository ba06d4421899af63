#include "image_view.h"

#include "track_colors.h"

#include "sapiens/common/log.h"
#include "sapiens/result/keypoint_metadata.h"

#include <opencv2/imgproc.hpp>

#include <QFile>
#include <QFontMetricsF>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QOpenGLContext>
#include <QOpenGLShaderProgram>
#include <QOpenGLVertexArrayObject>
#include <QPainter>
#include <QPolygonF>
#include <QVector2D>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <limits>

#ifndef GL_BGR
#define GL_BGR 0x80E0
#endif
#ifndef GL_BGRA
#define GL_BGRA 0x80E1
#endif
#ifndef GL_R8UI
#define GL_R8UI 0x8232
#endif
#ifndef GL_RED_INTEGER
#define GL_RED_INTEGER 0x8D94
#endif

namespace sapiens::widgets {
namespace {

// Each layer's sampler has its own unit; samplers of different types may not share one.
constexpr int kImageUnit = 0;
constexpr int kColorMapUnit = 1;
constexpr int kMaskUnit = 2;
constexpr int kPaletteUnit = 3;

// Above this zoom, image pixels are drawn as crisp squares (for inspecting them), below it smoothly.
constexpr double kNearestFilterZoom = 2.0;

// Pose marks keep their size on screen whatever the zoom (logical pixels).
constexpr double kKeypointRadius = 4.0;
constexpr double kLinkWidth = 2.0;
constexpr double kBoxWidth = 2.0;
constexpr double kSelectedBoxWidth = 4.0;

// Side by side: blank logical pixels between the two panes.
constexpr double kPaneGap = 4.0;
// Split: the divider can be grabbed this far (logical pixels) either side of it.
constexpr double kDividerGrab = 6.0;
// A press and release closer than this (logical pixels) is a click (selects a box), not a pan.
constexpr double kClickSlop = 3.0;
// Smaller sketches (image pixels a side) are taken for a slip of the mouse.
constexpr double kMinBoxSide = 2.0;
// Beyond any framebuffer column: layers off in that pane.
constexpr float kNoLayers = 1e9f;

QColor toQColor(const Rgb& rgb) {
  return QColor(rgb[0], rgb[1], rgb[2]);
}

// Ties go to the even neighbour, as the official renderer's rounding does; the result must not escape.
bool insideImage(const std::array<double, 2>& point, int width, int height) {
  const double x = std::nearbyint(point[0]);
  const double y = std::nearbyint(point[1]);
  return std::isfinite(x) && std::isfinite(y) && x >= 0 && y >= 0 && x < width && y < height;
}

QString readShader(const QString& resource) {
  QFile file(resource);
  if (!file.open(QIODevice::ReadOnly)) return {};
  return QString::fromUtf8(file.readAll());
}

}  // namespace

ImageView::ImageView(QWidget* parent) : QOpenGLWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(64, 64);
}

ImageView::~ImageView() {
  disconnect(contextDestroyed_);
  releaseGl();
}

void ImageView::releaseGl() {
  if (!program_ || !context()) return;
  makeCurrent();
  for (GlTexture* texture : {&texture_, &maskTexture_, &paletteTexture_, &colorMapTexture_}) {
    if (texture->id != 0) glDeleteTextures(1, &texture->id);
    *texture = GlTexture{};
  }
  vertexArray_.reset();
  program_.reset();
  doneCurrent();
  textureStale_ = !image_.empty();
  maskStale_ = !mask_.empty();
  paletteStale_ = !palette_.empty();
  colorMapStale_ = !colorMap_.empty();
}

void ImageView::setImage(const cv::Mat& bgr) {
  if (bgr.empty() || bgr.type() != CV_8UC3) {
    logger().error("image view: expected a non-empty 8-bit BGR image, got {}x{} of type {}", bgr.cols,
                   bgr.rows, bgr.type());
    return;
  }
  image_ = bgr.isContinuous() ? bgr : bgr.clone();
  clearLayers();
  textureStale_ = true;
  shownPending_ = true;
  zoom_ = 0.0;  // so that fitting reports the zoom even when it happens to be unchanged
  fitToView();
}

void ImageView::setFrame(const cv::Mat& bgr) {
  if (image_.empty() || bgr.size() != image_.size() || bgr.type() != CV_8UC3) return setImage(bgr);
  image_ = bgr.isContinuous() ? bgr : bgr.clone();
  clearLayers();
  textureStale_ = true;
  shownPending_ = true;
  update();
}

void ImageView::clear() {
  image_.release();
  clearLayers();
  textureStale_ = false;
  shownPending_ = false;
  Q_EMIT hoverLeft();
  update();
}

void ImageView::setMaskLayer(const cv::Mat& labels) {
  if (!labels.empty() && labels.type() != CV_8UC1) {
    logger().error("image view: a part mask must be 8-bit class indices, got type {}", labels.type());
    return;
  }
  mask_ = labels.empty() || labels.isContinuous() ? labels : labels.clone();
  maskStale_ = true;
  update();
}

void ImageView::setMaskPalette(const std::vector<QColor>& palette) {
  palette_ = palette;
  palette_.resize(std::min<std::size_t>(palette_.size(), 256));
  paletteStale_ = true;
  update();
}

void ImageView::setMaskOpacity(double opacity) {
  maskOpacity_ = std::clamp(opacity, 0.0, 1.0);
  update();
}

void ImageView::setMaskVisible(bool visible) {
  maskVisible_ = visible;
  update();
}

void ImageView::setColorMapLayer(const cv::Mat& bgra) {
  if (!bgra.empty() && bgra.type() != CV_8UC4) {
    logger().error("image view: a colour map must be 8-bit BGRA, got type {}", bgra.type());
    return;
  }
  colorMap_ = bgra.empty() || bgra.isContinuous() ? bgra : bgra.clone();
  colorMapStale_ = true;
  update();
}

void ImageView::setColorMapOpacity(double opacity) {
  colorMapOpacity_ = std::clamp(opacity, 0.0, 1.0);
  update();
}

void ImageView::setColorMapVisible(bool visible) {
  colorMapVisible_ = visible;
  update();
}

void ImageView::setPoses(const std::vector<PoseInstance>& poses) {
  poses_ = poses;
  selectBox(-1);
  update();
}

void ImageView::setHighlightedTrack(int trackId, const std::vector<QPointF>& path) {
  highlightedTrack_ = trackId;
  trackPath_ = trackId >= 0 ? path : std::vector<QPointF>();
  update();
}

void ImageView::selectBox(int index) {
  const int selected = index >= 0 && index < int(poses_.size()) ? index : -1;
  if (selected == selectedBox_) return;
  selectedBox_ = selected;
  update();
  Q_EMIT selectedBoxChanged(selectedBox_);
}

void ImageView::setCompareMode(CompareMode mode) {
  if (mode == compareMode_) return;
  // Keep the image point at the (left) pane's centre where it is when the pane changes width.
  const QPointF centre = widgetToImage(QPointF(paneWidth() / 2.0, height() / 2.0));
  compareMode_ = mode;
  if (fitToView_ || image_.empty()) {
    fitToView();
  } else {
    setZoomAndOrigin(zoom_, QPointF(paneWidth() / 2.0, height() / 2.0) - centre * zoom_);
  }
  update();
  Q_EMIT compareModeChanged(mode);
}

void ImageView::setSplitPosition(double fraction) {
  splitPosition_ = std::isfinite(fraction) ? std::clamp(fraction, 0.0, 1.0) : 0.5;
  update();
}

double ImageView::paneWidth() const {
  return compareMode_ == CompareMode::SideBySide ? std::max(1.0, std::floor((width() - kPaneGap) / 2.0))
                                                 : double(width());
}

QRectF ImageView::paneRect(Pane pane) const {
  const double x =
      compareMode_ == CompareMode::SideBySide && pane == Pane::Layers ? paneWidth() + kPaneGap : 0;
  return QRectF(x, 0, paneWidth(), height());
}

QPointF ImageView::toPane(const QPointF& widgetPos) const {
  const QRectF layers = paneRect(Pane::Layers);
  if (compareMode_ == CompareMode::SideBySide && widgetPos.x() >= layers.left())
    return widgetPos - layers.topLeft();
  return widgetPos;
}

void ImageView::setKeypointThreshold(double threshold) {
  keypointThreshold_ = threshold;
  update();
}

void ImageView::setPosesVisible(bool visible) {
  posesVisible_ = visible;
  update();
}

void ImageView::setBoxesVisible(bool visible) {
  boxesVisible_ = visible;
  update();
}

void ImageView::clearLayers() {
  mask_.release();
  colorMap_.release();
  poses_.clear();
  selectBox(-1);
  sketchingBox_ = false;
  maskStale_ = true;
  colorMapStale_ = true;
  update();
}

QPointF ImageView::widgetToImage(const QPointF& widgetPos) const {
  return (toPane(widgetPos) - origin_) / zoom_;
}

QPointF ImageView::imageToWidget(const QPointF& imagePos, Pane pane) const {
  return imagePos * zoom_ + origin_ + paneRect(pane).topLeft();
}

double ImageView::fitZoom() const {
  if (image_.empty() || width() <= 0 || height() <= 0) return 1.0;
  return std::min(paneWidth() / image_.cols, double(height()) / image_.rows);
}

void ImageView::fitToView() {
  fitToView_ = true;
  if (image_.empty()) return update();
  const double zoom = std::clamp(fitZoom(), std::min(kMinZoom, fitZoom()), kMaxZoom);
  const QPointF size(image_.cols * zoom, image_.rows * zoom);
  setZoomAndOrigin(zoom, (QPointF(paneWidth(), height()) - size) / 2.0);
}

void ImageView::showActualSize() {
  if (image_.empty()) return;
  fitToView_ = false;
  // Keep the image point at the (left) pane's centre where it is.
  const QPointF centre(paneWidth() / 2.0, height() / 2.0);
  const QPointF imageCentre = widgetToImage(centre);
  setZoomAndOrigin(1.0, centre - imageCentre);
}

void ImageView::zoomAt(const QPointF& anchor, double factor) {
  if (image_.empty() || !(factor > 0)) return;
  fitToView_ = false;
  const double minZoom = std::min(kMinZoom, fitZoom());
  const double zoom = std::clamp(zoom_ * factor, minZoom, kMaxZoom);
  const QPointF imagePoint = widgetToImage(anchor);
  setZoomAndOrigin(zoom, toPane(anchor) - imagePoint * zoom);
}

void ImageView::zoomIn() {
  zoomAt(QPointF(paneWidth() / 2.0, height() / 2.0), std::sqrt(2.0));
}

void ImageView::zoomOut() {
  zoomAt(QPointF(paneWidth() / 2.0, height() / 2.0), 1.0 / std::sqrt(2.0));
}

void ImageView::setZoomAndOrigin(double zoom, const QPointF& origin) {
  const bool zoomChangedNow = zoom != zoom_;
  zoom_ = zoom;
  origin_ = origin;
  update();
  if (zoomChangedNow) Q_EMIT zoomChanged(zoom_);
}

void ImageView::initializeGL() {
  initializeOpenGLFunctions();
  // The context goes away when the widget is re-parented to another window: rebuild on the next init.
  disconnect(contextDestroyed_);
  contextDestroyed_ = connect(context(), &QOpenGLContext::aboutToBeDestroyed, this, [this] { releaseGl(); });

  program_ = std::make_unique<QOpenGLShaderProgram>();
  const QString vertex = readShader(QStringLiteral(":/shaders/image.vert"));
  const QString fragment = readShader(QStringLiteral(":/shaders/image.frag"));
  if (vertex.isEmpty() || fragment.isEmpty() ||
      !program_->addShaderFromSourceCode(QOpenGLShader::Vertex, vertex) ||
      !program_->addShaderFromSourceCode(QOpenGLShader::Fragment, fragment) || !program_->link()) {
    logger().error("image view: cannot build the image shaders (OpenGL {}): {}",
                   reinterpret_cast<const char*>(glGetString(GL_VERSION)), program_->log().toStdString());
    program_.reset();
    return;
  }
  program_->bind();
  program_->setUniformValue("uImage", kImageUnit);
  program_->setUniformValue("uColorMap", kColorMapUnit);
  program_->setUniformValue("uMask", kMaskUnit);
  program_->setUniformValue("uPalette", kPaletteUnit);
  program_->setUniformValue("uColorMapEnabled", 0);
  program_->setUniformValue("uMaskEnabled", 0);
  program_->release();
  maskStale_ = !mask_.empty();
  paletteStale_ = !palette_.empty();
  colorMapStale_ = !colorMap_.empty();

  vertexArray_ = std::make_unique<QOpenGLVertexArrayObject>();
  vertexArray_->create();
  textureStale_ = !image_.empty();
}

void ImageView::resizeGL(int, int) {
  if (fitToView_) fitToView();
}

void ImageView::uploadPixels(GlTexture& texture, int unit, unsigned int internalFormat, int width, int height,
                             unsigned int format, unsigned int type, const void* pixels) {
  if (texture.id == 0) glGenTextures(1, &texture.id);
  glActiveTexture(GL_TEXTURE0 + unit);
  glBindTexture(GL_TEXTURE_2D, texture.id);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  if (texture.width == width && texture.height == height && texture.internalFormat == internalFormat) {
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, format, type, pixels);
    return;
  }
  glTexImage2D(GL_TEXTURE_2D, 0, GLint(internalFormat), width, height, 0, format, type, pixels);
  texture.width = width;
  texture.height = height;
  texture.internalFormat = internalFormat;
}

void ImageView::uploadTexture() {
  GLint maxSize = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxSize);
  cv::Mat pixels = image_;
  if (maxSize > 0 && std::max(image_.cols, image_.rows) > maxSize) {
    // Texture coordinates are normalised, so a smaller texture covers the same quad.
    const double scale = double(maxSize) / std::max(image_.cols, image_.rows);
    cv::resize(image_, pixels, cv::Size(), scale, scale, cv::INTER_AREA);
    logger().info("image view: {}x{} exceeds the GL texture limit {}, drawing it at {}x{}", image_.cols,
                  image_.rows, maxSize, pixels.cols, pixels.rows);
  }
  const bool reallocated = texture_.width != pixels.cols || texture_.height != pixels.rows;
  uploadPixels(texture_, kImageUnit, GL_RGB8, pixels.cols, pixels.rows, GL_BGR, GL_UNSIGNED_BYTE,
               pixels.data);
  if (reallocated) {
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    // New storage has only level 0; the old levels of a same-size texture must not be sampled either.
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
  }
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  mipmapsStale_ = true;
  textureStale_ = false;
}

// Mipmaps only matter when the picture is drawn smaller than 1:1, and making them is the costliest part
// of showing a new picture on a software renderer; at 1:1 and above each frame skips them.
void ImageView::updateMipmaps() {
  if (!mipmapsStale_ || zoom_ * devicePixelRatioF() >= 1.0 || texture_.id == 0) return;
  glActiveTexture(GL_TEXTURE0 + kImageUnit);
  glBindTexture(GL_TEXTURE_2D, texture_.id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 1000);
  glGenerateMipmap(GL_TEXTURE_2D);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR_MIPMAP_LINEAR);
  mipmapsStale_ = false;
}

void ImageView::uploadLayers() {
  auto filtering = [this](GLint filter) {  // of the texture uploadPixels left bound
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  };
  if (maskStale_ && !mask_.empty()) {
    // Integer textures cannot be filtered: class indices stay exact.
    uploadPixels(maskTexture_, kMaskUnit, GL_R8UI, mask_.cols, mask_.rows, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
                 mask_.data);
    filtering(GL_NEAREST);
  }
  maskStale_ = false;
  if (paletteStale_) {
    std::vector<unsigned char> rgba(256 * 4, 0);
    for (std::size_t i = 0; i < palette_.size(); ++i) {
      rgba[i * 4 + 0] = static_cast<unsigned char>(palette_[i].red());
      rgba[i * 4 + 1] = static_cast<unsigned char>(palette_[i].green());
      rgba[i * 4 + 2] = static_cast<unsigned char>(palette_[i].blue());
      rgba[i * 4 + 3] = static_cast<unsigned char>(palette_[i].alpha());
    }
    uploadPixels(paletteTexture_, kPaletteUnit, GL_RGBA8, 256, 1, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    filtering(GL_NEAREST);
    paletteStale_ = false;
  }
  if (colorMapStale_ && !colorMap_.empty()) {
    uploadPixels(colorMapTexture_, kColorMapUnit, GL_RGBA8, colorMap_.cols, colorMap_.rows, GL_BGRA,
                 GL_UNSIGNED_BYTE, colorMap_.data);
    filtering(GL_LINEAR);
  }
  colorMapStale_ = false;
}

// Keypoints are a QPainter pass over the GL picture rather than a shader layer: a few hundred
// anti-aliased circles and lines that keep their on-screen size at every zoom, and their coordinates
// are sub-pixel points, not a raster the shader could sample.
void ImageView::paintPoses(QPainter& painter) {
  if ((!posesVisible_ && !boxesVisible_) || poses_.empty()) return;
  const KeypointMetadata& metadata = keypoints308();
  painter.save();
  painter.setClipRect(layersRect());
  painter.setRenderHint(QPainter::Antialiasing);
  for (std::size_t p = 0; p < poses_.size(); ++p) {
    const PoseInstance& pose = poses_[p];
    if (boxesVisible_) {
      const bool selected = int(p) == selectedBox_;
      const bool highlighted = highlightedTrack_ >= 0 && pose.trackId == highlightedTrack_;
      QColor color = selected ? QColor(255, 200, 0) : trackColor(pose.trackId);
      if (highlightedTrack_ >= 0 && !highlighted && !selected) color.setAlpha(110);
      painter.setPen(QPen(color, selected || highlighted ? kSelectedBoxWidth : kBoxWidth));
      painter.setBrush(Qt::NoBrush);
      painter.drawRect(QRectF(imageToWidget(QPointF(pose.bbox.x1, pose.bbox.y1)),
                              imageToWidget(QPointF(pose.bbox.x2, pose.bbox.y2))));
      if (pose.trackId >= 0) paintTrackTag(painter, pose, color);
    }
    if (!posesVisible_) continue;
    const std::size_t count = std::min({pose.keypoints.size(), pose.scores.size(), metadata.size()});
    auto shown = [&](std::size_t i) {
      return i < count && pose.scores[i] >= keypointThreshold_ &&
             insideImage(pose.keypoints[i], image_.cols, image_.rows);
    };
    auto widgetPoint = [&](std::size_t i) {
      return imageToWidget(QPointF(pose.keypoints[i][0], pose.keypoints[i][1]));
    };
    for (std::size_t l = 0; l < metadata.skeletonLinks.size(); ++l) {
      const auto [a, b] = metadata.skeletonLinks[l];
      if (!shown(std::size_t(a)) || !shown(std::size_t(b))) continue;
      painter.setPen(QPen(toQColor(metadata.linkColors[l]), kLinkWidth, Qt::SolidLine, Qt::RoundCap));
      painter.drawLine(widgetPoint(std::size_t(a)), widgetPoint(std::size_t(b)));
    }
    painter.setPen(Qt::NoPen);
    for (std::size_t i = 0; i < count; ++i) {
      if (!shown(i)) continue;
      painter.setBrush(toQColor(metadata.keypointColors[i]));
      painter.drawEllipse(widgetPoint(i), kKeypointRadius, kKeypointRadius);
    }
  }
  painter.restore();
}

void ImageView::paintTrackTag(QPainter& painter, const PoseInstance& pose, const QColor& color) {
  const QString text = QStringLiteral("#%1").arg(pose.trackId);
  const QFontMetricsF metrics(painter.font());
  const QPointF corner = imageToWidget(QPointF(pose.bbox.x1, pose.bbox.y1));
  const QRectF tag(corner.x(), corner.y() - metrics.height() - 2, metrics.horizontalAdvance(text) + 6,
                   metrics.height() + 2);
  painter.save();
  painter.setPen(Qt::NoPen);
  painter.setBrush(color);
  painter.drawRect(tag);
  painter.setPen(color.lightnessF() > 0.55 ? Qt::black : Qt::white);
  painter.drawText(tag, Qt::AlignCenter, text);
  painter.restore();
}

void ImageView::paintTrackPath(QPainter& painter) {
  if (highlightedTrack_ < 0 || trackPath_.size() < 2 || !boxesVisible_) return;
  QPolygonF line;
  for (const QPointF& point : trackPath_) line << imageToWidget(point);
  painter.save();
  painter.setClipRect(layersRect());
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(
      QPen(QColor(0, 0, 0, 150), kSelectedBoxWidth + 2, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  painter.drawPolyline(line);
  painter.setPen(QPen(trackColor(highlightedTrack_), kBoxWidth, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  painter.drawPolyline(line);
  painter.restore();
}

void ImageView::paintBoxSketch(QPainter& painter) {
  if (!sketchingBox_) return;
  const QRectF box(imageToWidget(sketchStart_), imageToWidget(sketchEnd_));
  painter.save();
  painter.setBrush(Qt::NoBrush);
  painter.setPen(QPen(QColor(0, 0, 0), kBoxWidth));
  painter.drawRect(box.normalized());
  painter.setPen(QPen(QColor(255, 255, 255), kBoxWidth, Qt::DashLine));
  painter.drawRect(box.normalized());
  painter.restore();
}

void ImageView::paintComparisonMarks(QPainter& painter) {
  if (compareMode_ != CompareMode::Split) return;
  const double x = splitPosition_ * width();
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QPen(QColor(0, 0, 0, 140), 3.0));
  painter.drawLine(QPointF(x, 0), QPointF(x, height()));
  painter.setPen(QPen(QColor(255, 255, 255), 1.0));
  painter.drawLine(QPointF(x, 0), QPointF(x, height()));
  painter.setBrush(QColor(255, 255, 255));
  painter.setPen(QPen(QColor(0, 0, 0, 140), 1.0));
  painter.drawRoundedRect(QRectF(x - 4, height() / 2.0 - 16, 8, 32), 3, 3);
  painter.restore();
}

QRectF ImageView::layersRect() const {
  switch (compareMode_) {
    case CompareMode::Split: {
      const double x = splitPosition_ * width();
      return QRectF(x, 0, width() - x, height());
    }
    case CompareMode::SideBySide:
      return paneRect(Pane::Layers);
    case CompareMode::Blend:
      break;
  }
  return rect();
}

void ImageView::drawImagePane(const QRectF& pane, float layersFromX) {
  // The pane is a viewport of its own: geometry outside it is clipped, and its clip space is the pane's.
  const qreal dpr = devicePixelRatioF();
  glViewport(GLint(std::lround(pane.left() * dpr)), 0, GLsizei(std::lround(pane.width() * dpr)),
             GLsizei(std::lround(pane.height() * dpr)));
  // image pixels -> pane pixels -> clip space (y up). Column-major for the GL mat3.
  const double sx = 2.0 * zoom_ / pane.width();
  const double sy = -2.0 * zoom_ / pane.height();
  const double tx = 2.0 * origin_.x() / pane.width() - 1.0;
  const double ty = 1.0 - 2.0 * origin_.y() / pane.height();
  const GLfloat imageToClip[9] = {GLfloat(sx), 0, 0, 0, GLfloat(sy), 0, GLfloat(tx), GLfloat(ty), 1};
  glUniformMatrix3fv(program_->uniformLocation("uImageToClip"), 1, GL_FALSE, imageToClip);
  program_->setUniformValue("uLayersFromX", layersFromX);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

void ImageView::paintGL() {
  glClearColor(0.19f, 0.19f, 0.2f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (image_.empty()) {
    QPainter painter(this);
    painter.setPen(QColor(170, 170, 175));
    painter.drawText(rect(), Qt::AlignCenter, tr("Open an image or a folder, or drop one here"));
    return;
  }
  if (!program_) return;
  if (textureStale_) uploadTexture();
  updateMipmaps();
  uploadLayers();

  program_->bind();
  program_->setUniformValue("uImageSize", QVector2D(image_.cols, image_.rows));
  glActiveTexture(GL_TEXTURE0 + kImageUnit);
  glBindTexture(GL_TEXTURE_2D, texture_.id);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, zoom_ >= kNearestFilterZoom ? GL_NEAREST : GL_LINEAR);
  const bool maskOn = maskVisible_ && !mask_.empty() && maskTexture_.id != 0 && paletteTexture_.id != 0;
  const bool colorMapOn = colorMapVisible_ && !colorMap_.empty() && colorMapTexture_.id != 0;
  program_->setUniformValue("uMaskEnabled", maskOn ? 1 : 0);
  program_->setUniformValue("uMaskOpacity", GLfloat(maskOpacity_));
  program_->setUniformValue("uColorMapEnabled", colorMapOn ? 1 : 0);
  program_->setUniformValue("uColorMapOpacity", GLfloat(colorMapOpacity_));
  if (maskOn) {
    glActiveTexture(GL_TEXTURE0 + kMaskUnit);
    glBindTexture(GL_TEXTURE_2D, maskTexture_.id);
    glActiveTexture(GL_TEXTURE0 + kPaletteUnit);
    glBindTexture(GL_TEXTURE_2D, paletteTexture_.id);
  }
  if (colorMapOn) {
    glActiveTexture(GL_TEXTURE0 + kColorMapUnit);
    glBindTexture(GL_TEXTURE_2D, colorMapTexture_.id);
  }
  glActiveTexture(GL_TEXTURE0 + kImageUnit);
  vertexArray_->bind();
  const qreal dpr = devicePixelRatioF();
  switch (compareMode_) {
    case CompareMode::Blend:
      drawImagePane(paneRect(Pane::Layers), 0.0f);
      break;
    case CompareMode::Split:
      drawImagePane(paneRect(Pane::Layers), float(splitPosition_ * width() * dpr));
      break;
    case CompareMode::SideBySide:
      drawImagePane(paneRect(Pane::Image), kNoLayers);
      drawImagePane(paneRect(Pane::Layers), 0.0f);
      break;
  }
  vertexArray_->release();
  program_->release();
  glViewport(0, 0, GLsizei(std::lround(width() * dpr)), GLsizei(std::lround(height() * dpr)));

  const bool posesShown = (posesVisible_ || boxesVisible_) && !poses_.empty();
  const bool pathShown = highlightedTrack_ >= 0 && trackPath_.size() >= 2;
  if (posesShown || pathShown || sketchingBox_ || compareMode_ == CompareMode::Split) {
    QPainter painter(this);
    paintTrackPath(painter);
    paintPoses(painter);
    paintBoxSketch(painter);
    paintComparisonMarks(painter);
  }

  if (shownPending_) {
    shownPending_ = false;
    // Queued: whoever reacts (a screenshot, a test) must not re-enter paintGL.
    QMetaObject::invokeMethod(
        this, [this] { Q_EMIT imageShown(); }, Qt::QueuedConnection);
  }
}

void ImageView::wheelEvent(QWheelEvent* event) {
  const int steps = event->angleDelta().y();
  if (steps == 0 || image_.empty()) return event->ignore();
  // One wheel notch (120) zooms by 2^(1/4): four notches double the size.
  zoomAt(event->position(), std::pow(2.0, steps / 480.0));
  reportHover(event->position());
  event->accept();
}

QPointF ImageView::clampToImage(const QPointF& imagePoint) const {
  return QPointF(std::clamp(imagePoint.x(), 0.0, double(image_.cols)),
                 std::clamp(imagePoint.y(), 0.0, double(image_.rows)));
}

bool ImageView::nearDivider(const QPointF& widgetPos) const {
  return compareMode_ == CompareMode::Split &&
         std::abs(widgetPos.x() - splitPosition_ * width()) <= kDividerGrab;
}

int ImageView::boxAt(const QPointF& imagePoint) const {
  int best = -1;
  double bestArea = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < poses_.size(); ++i) {
    const BoundingBox& box = poses_[i].bbox;
    const bool inside = imagePoint.x() >= box.x1 && imagePoint.x() <= box.x2 + 1 &&
                        imagePoint.y() >= box.y1 && imagePoint.y() <= box.y2 + 1;
    // The innermost box wins where boxes nest.
    const double area = double(box.width()) * double(box.height());
    if (inside && area < bestArea) {
      best = int(i);
      bestArea = area;
    }
  }
  return best;
}

void ImageView::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && !image_.empty()) {
    if (nearDivider(event->position())) {
      draggingDivider_ = true;
      setCursor(Qt::SplitHCursor);
      event->accept();
      return;
    }
    if (event->modifiers() & Qt::ShiftModifier) {
      sketchingBox_ = true;
      sketchStart_ = sketchEnd_ = clampToImage(widgetToImage(event->position()));
      setCursor(Qt::CrossCursor);
      update();
      event->accept();
      return;
    }
  }
  if (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton) {
    dragging_ = true;
    lastDragPos_ = pressPos_ = event->position();
    setCursor(Qt::ClosedHandCursor);
    event->accept();
    return;
  }
  QOpenGLWidget::mousePressEvent(event);
}

void ImageView::mouseMoveEvent(QMouseEvent* event) {
  if (draggingDivider_) {
    setSplitPosition(width() > 0 ? event->position().x() / width() : 0.5);
    Q_EMIT splitPositionMoved(splitPosition_);
  } else if (sketchingBox_) {
    sketchEnd_ = clampToImage(widgetToImage(event->position()));
    update();
  } else if (dragging_ && !image_.empty()) {
    fitToView_ = false;
    setZoomAndOrigin(zoom_, origin_ + (event->position() - lastDragPos_));
    lastDragPos_ = event->position();
  } else if (nearDivider(event->position())) {
    setCursor(Qt::SplitHCursor);
  } else if (compareMode_ == CompareMode::Split) {
    unsetCursor();
  }
  reportHover(event->position());
}

void ImageView::mouseReleaseEvent(QMouseEvent* event) {
  if (draggingDivider_ && event->button() == Qt::LeftButton) {
    draggingDivider_ = false;
    unsetCursor();
    event->accept();
    return;
  }
  if (sketchingBox_ && event->button() == Qt::LeftButton) {
    sketchingBox_ = false;
    unsetCursor();
    update();
    const QRectF box = QRectF(sketchStart_, sketchEnd_).normalized();
    if (box.width() >= kMinBoxSide && box.height() >= kMinBoxSide) Q_EMIT personBoxDrawn(box);
    event->accept();
    return;
  }
  if (dragging_ && (event->button() == Qt::LeftButton || event->button() == Qt::MiddleButton)) {
    dragging_ = false;
    unsetCursor();
    const bool click = (event->position() - pressPos_).manhattanLength() < kClickSlop;
    if (click && event->button() == Qt::LeftButton && boxesVisible_ && !image_.empty()) {
      const int person = boxAt(widgetToImage(event->position()));
      selectBox(person);
      Q_EMIT personClicked(person);
    }
    event->accept();
    return;
  }
  QOpenGLWidget::mouseReleaseEvent(event);
}

void ImageView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_F:
      fitToView();
      break;
    case Qt::Key_1:
      showActualSize();
      break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
      zoomIn();
      break;
    case Qt::Key_Minus:
      zoomOut();
      break;
    case Qt::Key_Delete:
    case Qt::Key_Backspace:
      if (selectedBox_ < 0) return QOpenGLWidget::keyPressEvent(event);
      Q_EMIT personBoxDeleteRequested(selectedBox_);
      break;
    case Qt::Key_Escape:
      if (!sketchingBox_ && selectedBox_ < 0) return QOpenGLWidget::keyPressEvent(event);
      sketchingBox_ = false;
      selectBox(-1);
      update();
      break;
    default:
      QOpenGLWidget::keyPressEvent(event);
      return;
  }
  event->accept();
}

void ImageView::leaveEvent(QEvent* event) {
  Q_EMIT hoverLeft();
  QOpenGLWidget::leaveEvent(event);
}

void ImageView::reportHover(const QPointF& widgetPos) {
  if (image_.empty()) return;
  const QPointF p = widgetToImage(widgetPos);
  const int x = int(std::floor(p.x()));
  const int y = int(std::floor(p.y()));
  if (x < 0 || y < 0 || x >= image_.cols || y >= image_.rows) {
    Q_EMIT hoverLeft();
    return;
  }
  const cv::Vec3b bgr = image_.at<cv::Vec3b>(y, x);
  Q_EMIT pixelHovered(QPoint(x, y), QColor(bgr[2], bgr[1], bgr[0]));
}

}  // namespace sapiens::widgets
