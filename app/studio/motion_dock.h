#pragma once
// The Motion dock: a tracked person's joint angle over the open video's time, from the frames recorded
// so far (MotionRecording), analysed off the GUI thread on Analyse. The chart (Qt Charts) shows the raw
// curve in light grey and the filtered one over it, each broken where it has no value, and a vertical
// cursor at the time of the frame on display; a click in the plot asks to go to the nearest sample's
// frame. The chart can be saved as a PNG.

#include "motion_recording.h"

#include <QString>
#include <QWidget>

#include <functional>
#include <memory>
#include <optional>

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QLineSeries;
class QPushButton;
class QThreadPool;
class QValueAxis;

namespace sapiens::studio {

class MotionDock : public QWidget {
  Q_OBJECT

 public:
  /// Slow work (the analysis, writing the PNG) runs on `pool`, which its owner waits for before this goes.
  explicit MotionDock(QThreadPool* pool, QWidget* parent = nullptr);

  /// Where Analyse reads the recorded frames and the keypoint threshold from.
  void setSource(std::function<RecordedFrames()> frames, std::function<float()> keypointThreshold);
  /// Forgets the analysis and empties the chart (another video opened).
  void clear();
  /// How many frames with people are recorded, for the status line until the first analysis.
  void setRecordedFrames(std::size_t frames);
  /// Moves the cursor to the frame on display's time.
  void showTime(double seconds);
  /// Analyses the recorded frames in the background (the Analyse button); analysed follows.
  void analyse();
  /// Writes the chart as a PNG at `path` in the background (what Save as PNG does once a file is
  /// chosen); pngSaved follows.
  void savePng(const QString& path);

  /// The last analysis, if one succeeded and nothing cleared it since.
  const RecordingMotion* analysis() const { return analysis_.get(); }
  std::optional<double> cursorTime() const { return cursorTime_; }

 Q_SIGNALS:
  /// An analysis ended; `error` is empty when it succeeded.
  void analysed(const QString& error);
  /// A click in the chart asks for frame `index`.
  void seekRequested(qint64 index);
  void pngSaved(const QString& path, const QString& error);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void buildChart();
  void onAnalysed(std::shared_ptr<const RecordingMotion> analysis, const QString& error);
  void fillTracks();
  void fillAngles();
  void showAngle();
  void drawCursor();
  void seekToNearestSample(const QPointF& viewPosition);
  void chooseSavePath();
  const motion::TrackMotion* chosenMotion() const;

  QThreadPool* pool_;
  std::function<RecordedFrames()> frames_;
  std::function<float()> keypointThreshold_;
  QComboBox* track_ = nullptr;
  QComboBox* angle_ = nullptr;
  QPushButton* analyse_ = nullptr;
  QPushButton* savePng_ = nullptr;
  QLabel* status_ = nullptr;
  QChartView* chartView_ = nullptr;
  QChart* chart_ = nullptr;
  QValueAxis* timeAxis_ = nullptr;
  QValueAxis* degreesAxis_ = nullptr;
  QLineSeries* cursor_ = nullptr;
  std::shared_ptr<const RecordingMotion> analysis_;
  std::optional<double> cursorTime_;
  quint64 generation_ = 0;  // drops an analysis that a clear or a newer Analyse superseded
};

}  // namespace sapiens::studio
