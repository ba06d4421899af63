#include "label_canvas.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QUndoCommand>
#include <QUndoStack>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>
#include <utility>

namespace sapiens::widgets {

namespace {

constexpr double kHitRadius = 8.0;  // widget pixels

}  // namespace

// One seg edit: the pixels of a rectangle before and after.
class LabelCanvas::MaskCommand : public QUndoCommand {
 public:
  MaskCommand(LabelCanvas* canvas, cv::Rect region, cv::Mat before, cv::Mat after, const QString& text)
      : QUndoCommand(text),
        canvas_(canvas),
        region_(region),
        before_(std::move(before)),
        after_(std::move(after)) {}
  void undo() override { canvas_->applyMaskPatch(region_, before_); }
  void redo() override { canvas_->applyMaskPatch(region_, after_); }

 private:
  LabelCanvas* canvas_;
  cv::Rect region_;
  cv::Mat before_, after_;
};

// One keypoint edit: the people before and after (a few hundred numbers each).
class LabelCanvas::PeopleCommand : public QUndoCommand {
 public:
  PeopleCommand(LabelCanvas* canvas, std::vector<PersonLabel> before, std::vector<PersonLabel> after,
                const QString& text)
      : QUndoCommand(text), canvas_(canvas), before_(std::move(before)), after_(std::move(after)) {}
  void undo() override { canvas_->applyPeople(before_); }
  void redo() override { canvas_->applyPeople(after_); }

 private:
  LabelCanvas* canvas_;
  std::vector<PersonLabel> before_, after_;
};

LabelCanvas::LabelCanvas(QWidget* parent) : QWidget(parent), undo_(new QUndoStack(this)) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setMinimumSize(200, 150);
}

LabelCanvas::~LabelCanvas() {
  // The commands point back here: drop them before the members they touch go.
  undo_->clear();
}

void LabelCanvas::resetFrame() {
  undo_->clear();
  stroking_ = false;
  polygon_.clear();
  dragging_ = -1;
  picture_ = QImage();
  overlay_ = QImage();
  mask_.release();
  people_.clear();
  if (!image_.empty()) {
    cv::Mat rgb;
    cv::cvtColor(image_, rgb, cv::COLOR_BGR2RGB);
    picture_ = QImage(rgb.data, rgb.cols, rgb.rows, int(rgb.step), QImage::Format_RGB888).copy();
  }
}

void LabelCanvas::setSegFrame(const cv::Mat& bgr, const cv::Mat& mask, std::vector<LabelClass> classes) {
  CV_Assert(bgr.type() == CV_8UC3 && mask.type() == CV_8UC1 && mask.size() == bgr.size());
  image_ = bgr.clone();
  resetFrame();
  mode_ = Mode::Seg;
  mask_ = mask.clone();
  classes_ = std::move(classes);
  classVisible_.assign(classes_.size(), true);
  currentClass_ = std::clamp(currentClass_, 0, std::max(0, int(classes_.size()) - 1));
  overlay_ = QImage(mask_.cols, mask_.rows, QImage::Format_ARGB32_Premultiplied);
  rebuildOverlay(cv::Rect(0, 0, mask_.cols, mask_.rows));
  update();
}

void LabelCanvas::setKeypointFrame(const cv::Mat& bgr, std::vector<PersonLabel> people,
                                   std::vector<std::string> names, std::vector<Rgb> colors,
                                   std::vector<std::array<int, 2>> links) {
  CV_Assert(bgr.type() == CV_8UC3);
  image_ = bgr.clone();
  resetFrame();
  mode_ = Mode::Keypoints;
  keypointNames_ = std::move(names);
  keypointColors_ = std::move(colors);
  links_ = std::move(links);
  for (PersonLabel& person : people) person.keypoints.resize(keypointNames_.size());
  people_ = std::move(people);
  if (keypointShown_.size() != keypointNames_.size()) keypointShown_.assign(keypointNames_.size(), true);
  currentPerson_ = 0;
  currentKeypoint_ = std::clamp(currentKeypoint_, 0, std::max(0, int(keypointNames_.size()) - 1));
  Q_EMIT peopleChanged(int(people_.size()));
  Q_EMIT currentPersonChanged(currentPerson_);
  update();
}

void LabelCanvas::setReadOnlyFrame(const cv::Mat& bgr) {
  CV_Assert(bgr.type() == CV_8UC3);
  image_ = bgr.clone();
  resetFrame();
  mode_ = Mode::ReadOnly;
  update();
}

void LabelCanvas::clearFrame() {
  image_.release();
  resetFrame();
  mode_ = Mode::Empty;
  update();
}

void LabelCanvas::setTool(Tool tool) {
  if (tool_ == Tool::Polygon && tool != Tool::Polygon) polygon_.clear();
  tool_ = tool;
  update();
}

void LabelCanvas::setCurrentClass(int index) {
  currentClass_ = index;
}

void LabelCanvas::setBrushRadius(int radius) {
  brushRadius_ = std::max(1, radius);
  update();
}

void LabelCanvas::setClassVisible(int index, bool visible) {
  if (index < 0 || index >= int(classVisible_.size()) || classVisible_[index] == visible) return;
  classVisible_[index] = visible;
  if (!mask_.empty()) rebuildOverlay(cv::Rect(0, 0, mask_.cols, mask_.rows));
  update();
}

bool LabelCanvas::classVisible(int index) const {
  return index >= 0 && index < int(classVisible_.size()) && classVisible_[index];
}

void LabelCanvas::setOverlayOpacity(double opacity) {
  opacity_ = std::clamp(opacity, 0.0, 1.0);
  if (!mask_.empty()) rebuildOverlay(cv::Rect(0, 0, mask_.cols, mask_.rows));
  update();
}

void LabelCanvas::rebuildOverlay(const cv::Rect& region) {
  const cv::Rect r = region & cv::Rect(0, 0, mask_.cols, mask_.rows);
  const int alpha = int(std::lround(opacity_ * 255));
  for (int y = r.y; y < r.y + r.height; ++y) {
    const std::uint8_t* labels = mask_.ptr<std::uint8_t>(y);
    auto* out = reinterpret_cast<QRgb*>(overlay_.scanLine(y));
    for (int x = r.x; x < r.x + r.width; ++x) {
      const int c = labels[x];
      if (c < int(classes_.size()) && classVisible_[c]) {
        const Rgb& rgb = classes_[c].color;
        out[x] = qRgba(rgb[0] * alpha / 255, rgb[1] * alpha / 255, rgb[2] * alpha / 255, alpha);
      } else {
        out[x] = 0;
      }
    }
  }
}

void LabelCanvas::applyMaskPatch(const cv::Rect& region, const cv::Mat& patch) {
  if (mask_.empty()) return;
  patch.copyTo(mask_(region));
  rebuildOverlay(region);
  update();
  Q_EMIT edited();
}

void LabelCanvas::applyPeople(const std::vector<PersonLabel>& people) {
  const bool countChanged = people.size() != people_.size();
  people_ = people;
  if (currentPerson_ >= int(people_.size())) {
    currentPerson_ = std::max(0, int(people_.size()) - 1);
    Q_EMIT currentPersonChanged(currentPerson_);
  }
  if (countChanged) Q_EMIT peopleChanged(int(people_.size()));
  update();
  Q_EMIT edited();
}

void LabelCanvas::pushMaskEdit(const cv::Mat& before, const QString& text) {
  cv::Mat changed = before != mask_;
  std::vector<cv::Point> points;
  cv::findNonZero(changed, points);
  if (points.empty()) return;
  const cv::Rect region = cv::boundingRect(points);
  undo_->push(new MaskCommand(this, region, before(region).clone(), mask_(region).clone(), text));
}

void LabelCanvas::pushPeopleEdit(std::vector<PersonLabel> before, std::vector<PersonLabel> after,
                                 const QString& text) {
  undo_->push(new PeopleCommand(this, std::move(before), std::move(after), text));
}

void LabelCanvas::fillAt(const QPoint& pixel) {
  if (mode_ != Mode::Seg || !QRect(0, 0, mask_.cols, mask_.rows).contains(pixel)) return;
  if (currentClass_ < 0 || currentClass_ >= int(classes_.size())) return;
  const cv::Mat before = mask_.clone();
  cv::floodFill(mask_, cv::Point(pixel.x(), pixel.y()), cv::Scalar(currentClass_), nullptr, cv::Scalar(0),
                cv::Scalar(0), 4);
  rebuildOverlay(cv::Rect(0, 0, mask_.cols, mask_.rows));
  pushMaskEdit(before, tr("Fill"));
  update();
}

void LabelCanvas::fillPolygon(const QVector<QPoint>& pixels) {
  if (mode_ != Mode::Seg || pixels.size() < 3) return;
  if (currentClass_ < 0 || currentClass_ >= int(classes_.size())) return;
  std::vector<cv::Point> points;
  for (const QPoint& p : pixels) points.emplace_back(p.x(), p.y());
  const cv::Mat before = mask_.clone();
  cv::fillPoly(mask_, std::vector<std::vector<cv::Point>>{points}, cv::Scalar(currentClass_));
  rebuildOverlay(cv::boundingRect(points));
  pushMaskEdit(before, tr("Polygon"));
  update();
}

void LabelCanvas::paintDab(const QPoint& from, const QPoint& to) {
  const int value = tool_ == Tool::Eraser ? kIgnoreLabel : currentClass_;
  if (tool_ != Tool::Eraser && (value < 0 || value >= int(classes_.size()))) return;
  const int r = brushRadius_ - 1;
  const cv::Point a(from.x(), from.y()), b(to.x(), to.y());
  if (r <= 0) {
    cv::line(mask_, a, b, cv::Scalar(value), 1, cv::LINE_8);
  } else {
    cv::line(mask_, a, b, cv::Scalar(value), 2 * r + 1, cv::LINE_8);
    cv::circle(mask_, a, r, cv::Scalar(value), cv::FILLED, cv::LINE_8);
    cv::circle(mask_, b, r, cv::Scalar(value), cv::FILLED, cv::LINE_8);
  }
  const cv::Rect region = cv::Rect(std::min(a.x, b.x) - r - 2, std::min(a.y, b.y) - r - 2,
                                   std::abs(a.x - b.x) + 2 * r + 5, std::abs(a.y - b.y) + 2 * r + 5);
  rebuildOverlay(region);
  update();
}

void LabelCanvas::finishStroke() {
  if (!stroking_) return;
  stroking_ = false;
  pushMaskEdit(strokeBefore_, tool_ == Tool::Eraser ? tr("Erase") : tr("Brush stroke"));
  strokeBefore_.release();
}

void LabelCanvas::closePolygon() {
  const QVector<QPoint> points = polygon_;
  polygon_.clear();
  fillPolygon(points);
  update();
}

// Keypoints

void LabelCanvas::setCurrentKeypoint(int index) {
  if (index < 0 || index >= int(keypointNames_.size()) || index == currentKeypoint_) return;
  currentKeypoint_ = index;
  update();
  Q_EMIT currentKeypointChanged(index);
}

void LabelCanvas::setCurrentPerson(int index) {
  if (index < 0 || index >= std::max(1, int(people_.size())) || index == currentPerson_) return;
  currentPerson_ = index;
  update();
  Q_EMIT currentPersonChanged(index);
}

void LabelCanvas::addPerson() {
  if (mode_ != Mode::Keypoints) return;
  std::vector<PersonLabel> after = people_;
  PersonLabel person;
  person.keypoints.assign(keypointNames_.size(), KeypointLabel{});
  after.push_back(person);
  pushPeopleEdit(people_, std::move(after), tr("Add person"));
  setCurrentPerson(int(people_.size()) - 1);
}

void LabelCanvas::setKeypointFilter(std::vector<bool> shown) {
  keypointShown_ = std::move(shown);
  if (keypointShown_.size() != keypointNames_.size()) keypointShown_.resize(keypointNames_.size(), true);
  if (!keypointShown(currentKeypoint_)) advanceKeypoint();
  update();
}

bool LabelCanvas::keypointShown(int index) const {
  return index >= 0 && index < int(keypointShown_.size()) && keypointShown_[index];
}

void LabelCanvas::setPlaceVisibility(int visibility) {
  placeVisibility_ = visibility == 1 ? 1 : 2;
}

std::vector<PersonLabel> LabelCanvas::peopleWithPerson() const {
  std::vector<PersonLabel> people = people_;
  while (int(people.size()) <= currentPerson_) {
    PersonLabel person;
    person.keypoints.assign(keypointNames_.size(), KeypointLabel{});
    people.push_back(person);
  }
  return people;
}

void LabelCanvas::placeKeypoint(int index, const QPointF& pixel, int visibility) {
  if (mode_ != Mode::Keypoints || index < 0 || index >= int(keypointNames_.size())) return;
  std::vector<PersonLabel> after = peopleWithPerson();
  after[currentPerson_].keypoints[index] = {pixel.x(), pixel.y(), visibility == 1 ? 1 : 2};
  pushPeopleEdit(people_, std::move(after),
                 tr("Place %1").arg(QString::fromStdString(keypointNames_[index])));
}

void LabelCanvas::deleteKeypoint(int index) {
  if (mode_ != Mode::Keypoints || currentPerson_ >= int(people_.size())) return;
  if (index < 0 || index >= int(keypointNames_.size())) return;
  if (people_[currentPerson_].keypoints[index].visibility == 0) return;
  std::vector<PersonLabel> after = people_;
  after[currentPerson_].keypoints[index] = KeypointLabel{};
  pushPeopleEdit(people_, std::move(after),
                 tr("Delete %1").arg(QString::fromStdString(keypointNames_[index])));
}

void LabelCanvas::toggleKeypointVisibility(int index) {
  if (mode_ != Mode::Keypoints || currentPerson_ >= int(people_.size())) return;
  if (index < 0 || index >= int(keypointNames_.size())) return;
  const KeypointLabel& k = people_[currentPerson_].keypoints[index];
  if (k.visibility == 0) return;
  std::vector<PersonLabel> after = people_;
  after[currentPerson_].keypoints[index].visibility = k.visibility == 2 ? 1 : 2;
  pushPeopleEdit(people_, std::move(after), tr("Toggle visibility"));
}

int LabelCanvas::keypointAt(const QPointF& widgetPos) const {
  if (currentPerson_ >= int(people_.size())) return -1;
  const auto& keypoints = people_[currentPerson_].keypoints;
  int best = -1;
  double bestDistance = kHitRadius;
  for (int i = 0; i < int(keypoints.size()); ++i) {
    if (keypoints[i].visibility == 0 || !keypointShown(i)) continue;
    const QPointF p = widgetPoint({keypoints[i].x, keypoints[i].y});
    const double d = std::hypot(p.x() - widgetPos.x(), p.y() - widgetPos.y());
    if (d <= bestDistance) best = i, bestDistance = d;
  }
  return best;
}

void LabelCanvas::advanceKeypoint() {
  const int count = int(keypointNames_.size());
  if (count == 0) return;
  const std::vector<KeypointLabel>* labelled =
      currentPerson_ < int(people_.size()) ? &people_[currentPerson_].keypoints : nullptr;
  for (int step = 1; step <= count; ++step) {
    const int i = (currentKeypoint_ + step) % count;
    if (keypointShown(i) && (!labelled || (*labelled)[i].visibility == 0)) return setCurrentKeypoint(i);
  }
}

QColor LabelCanvas::keypointColor(int index) const {
  if (index >= 0 && index < int(keypointColors_.size())) {
    const Rgb& c = keypointColors_[index];
    return QColor(c[0], c[1], c[2]);
  }
  return QColor(255, 200, 0);
}

// View geometry

double LabelCanvas::scale() const {
  if (image_.empty()) return 1.0;
  return std::min(double(width()) / image_.cols, double(height()) / image_.rows) * zoom_;
}

QPointF LabelCanvas::offset() const {
  const double s = scale();
  return QPointF((width() - image_.cols * s) / 2, (height() - image_.rows * s) / 2) + pan_;
}

QPointF LabelCanvas::widgetPoint(const QPointF& imagePoint) const {
  return offset() + imagePoint * scale();
}

QPointF LabelCanvas::imagePoint(const QPointF& widgetPos) const {
  return (widgetPos - offset()) / scale();
}

QPoint LabelCanvas::pixelAt(const QPointF& widgetPos) const {
  const QPointF p = imagePoint(widgetPos);
  return {int(std::floor(p.x())), int(std::floor(p.y()))};
}

void LabelCanvas::resetView() {
  zoom_ = 1.0;
  pan_ = {};
  update();
}

// Events

void LabelCanvas::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  const QPointF pos = event->position();
  if (event->button() == Qt::MiddleButton) {
    panning_ = true;
    panStart_ = pos - pan_;
    return;
  }
  if (mode_ == Mode::Seg) {
    const QPoint pixel = pixelAt(pos);
    if (event->button() == Qt::RightButton) {
      polygon_.clear();
      update();
      return;
    }
    if (event->button() != Qt::LeftButton) return;
    switch (tool_) {
      case Tool::Brush:
      case Tool::Eraser:
        stroking_ = true;
        strokeBefore_ = mask_.clone();
        lastPixel_ = pixel;
        paintDab(pixel, pixel);
        break;
      case Tool::Fill:
        fillAt(pixel);
        break;
      case Tool::Polygon:
        if (polygon_.size() >= 3) {
          const QPointF first = widgetPoint(QPointF(polygon_.front()) + QPointF(0.5, 0.5));
          if (std::hypot(first.x() - pos.x(), first.y() - pos.y()) <= kHitRadius) return closePolygon();
        }
        polygon_.push_back(pixel);
        update();
        break;
    }
  } else if (mode_ == Mode::Keypoints) {
    const int hit = keypointAt(pos);
    if (event->button() == Qt::RightButton) {
      if (hit >= 0) deleteKeypoint(hit);
      return;
    }
    if (event->button() != Qt::LeftButton) return;
    if (hit >= 0) {
      dragging_ = hit;
      dragMoved_ = false;
      dragBefore_ = people_;
      setCurrentKeypoint(hit);
      return;
    }
    if (!keypointShown(currentKeypoint_)) return;
    const QPointF p = imagePoint(pos);
    if (p.x() < 0 || p.y() < 0 || p.x() >= image_.cols || p.y() >= image_.rows) return;
    const int visibility = (event->modifiers() & Qt::ShiftModifier) ? 1 : placeVisibility_;
    placeKeypoint(currentKeypoint_, p, visibility);
    advanceKeypoint();
  }
}

void LabelCanvas::mouseMoveEvent(QMouseEvent* event) {
  const QPointF pos = event->position();
  hover_ = pos;
  if (panning_) {
    pan_ = pos - panStart_;
    update();
    return;
  }
  if (stroking_) {
    const QPoint pixel = pixelAt(pos);
    paintDab(lastPixel_, pixel);
    lastPixel_ = pixel;
    return;
  }
  if (dragging_ >= 0 && currentPerson_ < int(people_.size())) {
    const QPointF p = imagePoint(pos);
    KeypointLabel& k = people_[currentPerson_].keypoints[dragging_];
    k.x = std::clamp(p.x(), 0.0, double(image_.cols - 1));
    k.y = std::clamp(p.y(), 0.0, double(image_.rows - 1));
    dragMoved_ = true;
  }
  update();
}

void LabelCanvas::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::MiddleButton) {
    panning_ = false;
    return;
  }
  if (event->button() != Qt::LeftButton) return;
  if (stroking_) finishStroke();
  if (dragging_ >= 0) {
    const int index = dragging_;
    dragging_ = -1;
    if (dragMoved_) {
      std::vector<PersonLabel> after = people_;
      people_ = dragBefore_;
      pushPeopleEdit(std::move(dragBefore_), std::move(after),
                     tr("Move %1").arg(QString::fromStdString(keypointNames_[index])));
    }
  }
}

void LabelCanvas::mouseDoubleClickEvent(QMouseEvent* event) {
  if (mode_ == Mode::Seg && tool_ == Tool::Polygon && event->button() == Qt::LeftButton) {
    // The double click's first press added a vertex already.
    if (polygon_.size() >= 3) closePolygon();
    return;
  }
  mousePressEvent(event);
}

void LabelCanvas::wheelEvent(QWheelEvent* event) {
  if (image_.empty()) return;
  const QPointF pos = event->position();
  const QPointF anchor = imagePoint(pos);
  const double factor = std::pow(1.0015, event->angleDelta().y());
  zoom_ = std::clamp(zoom_ * factor, 0.2, 40.0);
  // Keep the picture point under the cursor in place.
  pan_ += pos - widgetPoint(anchor);
  update();
}

void LabelCanvas::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Escape:
      polygon_.clear();
      update();
      return;
    case Qt::Key_Return:
    case Qt::Key_Enter:
      if (polygon_.size() >= 3) closePolygon();
      return;
    case Qt::Key_Delete:
    case Qt::Key_Backspace:
      if (mode_ == Mode::Keypoints) deleteKeypoint(currentKeypoint_);
      return;
    case Qt::Key_V:
      if (mode_ == Mode::Keypoints) toggleKeypointVisibility(currentKeypoint_);
      return;
    case Qt::Key_0:
      resetView();
      return;
    default:
      QWidget::keyPressEvent(event);
  }
}

void LabelCanvas::leaveEvent(QEvent*) {
  hover_.reset();
  update();
}

void LabelCanvas::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window().color().darker(130));
  if (image_.empty()) {
    painter.setPen(palette().text().color());
    painter.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
                     tr("No frame: create or open a label set, then add the picture on display"));
    return;
  }
  const double s = scale();
  const QRectF target(offset(), QSizeF(image_.cols * s, image_.rows * s));
  painter.setRenderHint(QPainter::SmoothPixmapTransform, s < 1.0);
  painter.drawImage(target, picture_);
  if (mode_ == Mode::Seg) {
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter.drawImage(target, overlay_);
    painter.setRenderHint(QPainter::Antialiasing);
    if (!polygon_.isEmpty()) {
      painter.setPen(QPen(Qt::white, 1.5, Qt::DashLine));
      QPolygonF outline;
      for (const QPoint& p : polygon_) outline << widgetPoint(QPointF(p) + QPointF(0.5, 0.5));
      if (hover_) outline << *hover_;
      painter.drawPolyline(outline);
      painter.setBrush(Qt::white);
      for (int i = 0; i < polygon_.size(); ++i) painter.drawEllipse(outline[i], 3, 3);
      painter.setBrush(Qt::NoBrush);
    }
    if (hover_ && (tool_ == Tool::Brush || tool_ == Tool::Eraser)) {
      painter.setPen(QPen(tool_ == Tool::Eraser ? Qt::white : Qt::yellow, 1));
      const double r = std::max(0.5, brushRadius_ - 0.5) * s;
      painter.drawEllipse(*hover_, r, r);
    }
  } else if (mode_ == Mode::Keypoints) {
    painter.setRenderHint(QPainter::Antialiasing);
    for (int person = 0; person < int(people_.size()); ++person) {
      const auto& keypoints = people_[person].keypoints;
      const bool current = person == currentPerson_;
      painter.setOpacity(current ? 1.0 : 0.45);
      for (const auto& link : links_) {
        if (link[0] >= int(keypoints.size()) || link[1] >= int(keypoints.size())) continue;
        const KeypointLabel& a = keypoints[link[0]];
        const KeypointLabel& b = keypoints[link[1]];
        if (!a.visibility || !b.visibility || !keypointShown(link[0]) || !keypointShown(link[1])) continue;
        painter.setPen(QPen(keypointColor(link[0]), 1.5));
        painter.drawLine(widgetPoint({a.x, a.y}), widgetPoint({b.x, b.y}));
      }
      for (int i = 0; i < int(keypoints.size()); ++i) {
        const KeypointLabel& k = keypoints[i];
        if (!k.visibility || !keypointShown(i)) continue;
        const QPointF p = widgetPoint({k.x, k.y});
        const QColor color = keypointColor(i);
        painter.setPen(QPen(current && i == currentKeypoint_ ? Qt::white : Qt::black, 1));
        painter.setBrush(k.visibility == 2 ? QBrush(color) : QBrush(Qt::NoBrush));
        if (k.visibility == 1) painter.setPen(QPen(color, 2, Qt::DotLine));
        painter.drawEllipse(p, 4, 4);
      }
      painter.setBrush(Qt::NoBrush);
    }
    painter.setOpacity(1.0);
    if (currentKeypoint_ < int(keypointNames_.size())) {
      const QString hint = tr("Person %1, click to place: %2 (Shift: hidden)")
                               .arg(currentPerson_ + 1)
                               .arg(QString::fromStdString(keypointNames_[currentKeypoint_]));
      painter.setPen(Qt::black);
      painter.drawText(QPointF(9, 19), hint);
      painter.setPen(Qt::white);
      painter.drawText(QPointF(8, 18), hint);
    }
  }
}

}  // namespace sapiens::widgets
