#pragma once
// A thin bar under the timeline's slider that shows where one person's track is seen in the video: the
// runs of frames in the track's colour over the whole length. A click on it asks for that frame.

#include "sapiens/pipeline/video_tracks.h"

#include <QColor>
#include <QWidget>

#include <vector>

namespace sapiens::widgets {

class TrackStrip : public QWidget {
  Q_OBJECT

 public:
  explicit TrackStrip(QWidget* parent = nullptr);

  /// Frames 0..lastFrame are the strip's width; `inset`: pixels left free at either end (the slider's
  /// half handle, so that a frame lines up with the slider's handle on it).
  void setRange(qint64 lastFrame, int inset);
  void setSpans(const std::vector<TrackSpan>& spans, const QColor& color);
  const std::vector<TrackSpan>& spans() const { return spans_; }
  /// The frame under widget x, clamped to the range.
  qint64 frameAt(double x) const;
  /// The widget x of frame `frame`.
  double xOf(double frame) const;

  QSize sizeHint() const override { return {100, 6}; }
  QSize minimumSizeHint() const override { return {10, 6}; }

 Q_SIGNALS:
  void frameClicked(qint64 frame);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  std::vector<TrackSpan> spans_;
  QColor color_;
  qint64 lastFrame_ = 0;
  int inset_ = 0;
};

}  // namespace sapiens::widgets
