#pragma once
// The permanent read-outs of the status bar: what the results say under the cursor, the pixel and its
// colour, the picture's size, the zoom, the models, the last run's time (per task in its tooltip), the
// playback rate and where the models run.

#include "task_set.h"

#include "sapiens/result/frame_result.h"

#include <QObject>
#include <QString>

class QLabel;
class QStatusBar;

namespace sapiens::widgets {
class ImageView;
}

namespace sapiens::studio {

class ResultLayers;

/// What went wrong in a run that gave results: "seg failed: why; <warning>"; empty when nothing did.
QString resultProblems(const FrameResult& result);

class StatusReadouts : public QObject {
  Q_OBJECT

 public:
  /// Adds the read-outs, with the models', rate and device labels others keep up to date, to `bar`.
  StatusReadouts(QStatusBar* bar, widgets::ImageView* view, const ResultLayers* layers, QLabel* modelLabel,
                 QLabel* rateLabel, QLabel* deviceLabel);
  void showPictureSize(int width, int height);
  /// The run's wall time ("cached" when it came from the cache); returns "seg 120 ms, pose 340 ms".
  QString showRunTime(TaskSet tasks, const FrameResult& result, double wallMs, bool fromCache);

 private:
  QLabel* readout_;
  QLabel* hover_;
  QLabel* size_;
  QLabel* zoom_;
  QLabel* latency_;
};

}  // namespace sapiens::studio
