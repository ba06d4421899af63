#include "track_strip.h"

#include <QMouseEvent>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace sapiens::widgets {

TrackStrip::TrackStrip(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setCursor(Qt::PointingHandCursor);
}

void TrackStrip::setRange(qint64 lastFrame, int inset) {
  lastFrame_ = std::max<qint64>(0, lastFrame);
  inset_ = std::max(0, inset);
  update();
}

void TrackStrip::setSpans(const std::vector<TrackSpan>& spans, const QColor& color) {
  spans_ = spans;
  color_ = color;
  update();
}

double TrackStrip::xOf(double frame) const {
  const double usable = std::max(1, width() - 2 * inset_);
  return inset_ + (lastFrame_ > 0 ? frame / double(lastFrame_) * usable : 0.0);
}

qint64 TrackStrip::frameAt(double x) const {
  const double usable = std::max(1, width() - 2 * inset_);
  const double frame = (x - inset_) / usable * double(lastFrame_);
  return std::clamp<qint64>(std::llround(frame), 0, lastFrame_);
}

void TrackStrip::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(QRectF(inset_, 1, std::max(0, width() - 2 * inset_), height() - 2),
                   palette().color(QPalette::Mid));
  // A run covers its frames' whole width (frame f spans f - 0.5 .. f + 0.5), at least a pixel.
  for (const TrackSpan& span : spans_) {
    const double left = xOf(double(span.first) - 0.5), right = xOf(double(span.last) + 0.5);
    const double x1 = std::max<double>(inset_, left), x2 = std::min<double>(width() - inset_, right);
    painter.fillRect(QRectF(x1, 0, std::max(1.0, x2 - x1), height()), color_);
  }
}

void TrackStrip::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  Q_EMIT frameClicked(frameAt(event->position().x()));
  event->accept();
}

}  // namespace sapiens::widgets
