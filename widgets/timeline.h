#pragma once
// The transport bar under the picture for videos and cameras: play/pause, frame step, loop, a slider to
// scrub and the time and frame read-out, and under the slider the frames where a chosen person is seen.
// It only asks (signals); the window's media player decides.

#include "sapiens/pipeline/video_tracks.h"

#include <QWidget>

#include <vector>

class QLabel;
class QSlider;
class QToolButton;

namespace sapiens::widgets {

class TrackStrip;

class Timeline : public QWidget {
  Q_OBJECT

 public:
  explicit Timeline(QWidget* parent = nullptr);

  /// A file of `frameCount` frames (-1: unknown, the slider then grows as frames come) at `fps`, or a
  /// live source (no slider, no stepping).
  void setMedia(qint64 frameCount, double fps, bool live);
  /// The frame on display. Ignored by the slider while the user drags it.
  void setPosition(qint64 frame, double seconds);
  void setPlaying(bool playing);
  bool isLooping() const;
  void setLooping(bool looping);
  qint64 position() const { return position_; }
  qint64 frameCount() const { return frameCount_; }
  bool isLive() const { return live_; }
  /// Marks the runs of frames where one person's track is seen, in `color`, `description` as the tip;
  /// no spans hide the marks.
  void setTrackSpans(const std::vector<TrackSpan>& spans, const QColor& color, const QString& description);
  const std::vector<TrackSpan>& trackSpans() const;

 Q_SIGNALS:
  /// The user moved the slider (dragging, clicking or keys on it): show `frame`.
  void seekRequested(qint64 frame);
  void playPauseRequested();
  void stepRequested(int delta);
  void loopingChanged(bool looping);

 private:
  void updateReadout();
  void updateStripRange();

  QToolButton* play_ = nullptr;
  QToolButton* back_ = nullptr;
  QToolButton* forward_ = nullptr;
  QToolButton* loop_ = nullptr;
  QSlider* slider_ = nullptr;
  TrackStrip* strip_ = nullptr;
  QLabel* readout_ = nullptr;
  qint64 frameCount_ = -1;
  qint64 position_ = 0;
  double seconds_ = 0;
  double fps_ = 0;
  bool live_ = false;
  bool playing_ = false;
};

}  // namespace sapiens::widgets
