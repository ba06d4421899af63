#include "loss_chart.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <limits>

namespace sapiens::widgets {

LossChart::LossChart(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_OpaquePaintEvent);
}

int LossChart::addSeries(const QString& name, const QColor& color) {
  series_.push_back({name, color, {}});
  update();
  return int(series_.size()) - 1;
}

void LossChart::addPoint(int series, double step, double value) {
  if (series < 0 || series >= series_.size() || !std::isfinite(step) || !std::isfinite(value)) return;
  series_[series].points.push_back({step, value});
  update();
}

void LossChart::setSeriesName(int series, const QString& name) {
  if (series < 0 || series >= series_.size() || series_[series].name == name) return;
  series_[series].name = name;
  update();
}

void LossChart::clearPoints() {
  for (Series& s : series_) s.points.clear();
  update();
}

int LossChart::pointCount(int series) const {
  return series >= 0 && series < series_.size() ? int(series_[series].points.size()) : 0;
}

QVector<QPointF> LossChart::points(int series) const {
  return series >= 0 && series < series_.size() ? series_[series].points : QVector<QPointF>();
}

void LossChart::setTitle(const QString& title) {
  title_ = title;
  update();
}

void LossChart::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().base());
  painter.setRenderHint(QPainter::Antialiasing);
  const QFontMetrics metrics(font());
  const int lineHeight = metrics.height();

  double xMin = std::numeric_limits<double>::max(), xMax = std::numeric_limits<double>::lowest();
  double yMin = xMin, yMax = xMax;
  for (const Series& s : series_) {
    for (const QPointF& p : s.points) {
      xMin = std::min(xMin, p.x()), xMax = std::max(xMax, p.x());
      yMin = std::min(yMin, p.y()), yMax = std::max(yMax, p.y());
    }
  }
  const bool empty = xMin > xMax;
  const double dataMin = yMin;
  if (empty) xMin = 0, xMax = 1, yMin = 0, yMax = 1;
  if (xMax - xMin < 1) xMax = xMin + 1;
  if (yMax - yMin < 1e-9) {
    const double pad = std::max(std::abs(yMax) * 0.1, 1e-3);
    yMin -= pad, yMax += pad;
  }
  // A little head room, and a loss axis that starts at 0 when the values are all positive and near it.
  if (yMin > 0 && yMin < 0.5 * yMax) yMin = 0;
  if (yMin < 0 && !empty && dataMin >= 0) yMin = 0;  // a padded flat line of non-negative values
  yMax += 0.05 * (yMax - yMin);

  const QString yTop = QString::number(yMax, 'g', 3), yBottom = QString::number(yMin, 'g', 3);
  const int left = std::max(metrics.horizontalAdvance(yTop), metrics.horizontalAdvance(yBottom)) + 8;
  const QRect plot = rect().adjusted(left, lineHeight + 6, -8, -(lineHeight + 6));
  if (plot.width() < 10 || plot.height() < 10) return;

  painter.setPen(palette().text().color());
  if (!title_.isEmpty()) painter.drawText(QRect(0, 2, width(), lineHeight), Qt::AlignHCenter, title_);
  painter.setPen(palette().mid().color());
  painter.drawRect(plot);
  painter.setPen(palette().text().color());
  painter.drawText(QRect(0, plot.top() - lineHeight / 2, left - 4, lineHeight), Qt::AlignRight, yTop);
  painter.drawText(QRect(0, plot.bottom() - lineHeight / 2, left - 4, lineHeight), Qt::AlignRight, yBottom);
  painter.drawText(QRect(plot.left(), plot.bottom() + 2, plot.width(), lineHeight), Qt::AlignLeft,
                   QString::number(xMin, 'g', 6));
  painter.drawText(QRect(plot.left(), plot.bottom() + 2, plot.width(), lineHeight), Qt::AlignRight,
                   QString::number(xMax, 'g', 6));
  if (empty) {
    painter.setPen(palette().mid().color());
    painter.drawText(plot, Qt::AlignCenter, tr("no data yet"));
    return;
  }

  auto map = [&](const QPointF& p) {
    return QPointF(plot.left() + (p.x() - xMin) / (xMax - xMin) * plot.width(),
                   plot.bottom() - (p.y() - yMin) / (yMax - yMin) * plot.height());
  };
  int legendX = plot.left() + 6;
  for (const Series& s : series_) {
    painter.setPen(QPen(s.color, 1.5));
    if (s.points.size() == 1) {
      painter.setBrush(s.color);
      painter.drawEllipse(map(s.points.front()), 2.5, 2.5);
      painter.setBrush(Qt::NoBrush);
    } else if (s.points.size() > 1) {
      QPainterPath path(map(s.points.front()));
      for (int i = 1; i < s.points.size(); ++i) path.lineTo(map(s.points[i]));
      painter.drawPath(path);
    }
    const QString label =
        s.points.isEmpty() ? s.name : QStringLiteral("%1 %2").arg(s.name).arg(s.points.back().y(), 0, 'g', 4);
    painter.drawLine(legendX, plot.top() + lineHeight / 2 + 2, legendX + 12, plot.top() + lineHeight / 2 + 2);
    painter.drawText(legendX + 16, plot.top() + lineHeight, label);
    legendX += 16 + metrics.horizontalAdvance(label) + 14;
  }
}

}  // namespace sapiens::widgets
