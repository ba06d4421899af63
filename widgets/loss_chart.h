#pragma once
// A small line chart drawn with QPainter (Qt Charts is not a dependency): one or more named series of
// (step, value) points on shared axes that grow with the data. Used for the fine-tuning panel's loss
// curves and task metric.

#include <QColor>
#include <QPointF>
#include <QString>
#include <QVector>
#include <QWidget>

namespace sapiens::widgets {

class LossChart : public QWidget {
  Q_OBJECT

 public:
  explicit LossChart(QWidget* parent = nullptr);

  /// Adds a series and returns its index.
  int addSeries(const QString& name, const QColor& color);
  /// Appends a point (x = training step); non-finite values are ignored.
  void addPoint(int series, double step, double value);
  void setSeriesName(int series, const QString& name);
  /// Removes every point, keeping the series.
  void clearPoints();
  int seriesCount() const { return int(series_.size()); }
  int pointCount(int series) const;
  /// The points of `series`, oldest first.
  QVector<QPointF> points(int series) const;
  void setTitle(const QString& title);
  QString title() const { return title_; }

  QSize sizeHint() const override { return {320, 160}; }
  QSize minimumSizeHint() const override { return {160, 90}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Series {
    QString name;
    QColor color;
    QVector<QPointF> points;
  };
  QVector<Series> series_;
  QString title_;
};

}  // namespace sapiens::widgets
