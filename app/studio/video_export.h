#pragma once
// File > Export > Annotated Video: the open video through the checked tasks' models with the core's
// video run (what `sapiens-cli run VIDEO --video-out FILE` does), on a thread of its own, with progress
// and cancel. Only the video is kept: the run's other outputs go to a temporary folder that is removed.
// The file appears only when the video is complete (the core writes it beside and renames it).

#include "task_set.h"

#include "sapiens/pipeline/input_size.h"
#include "sapiens/pipeline/person_box_file.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <thread>

namespace sapiens::studio {

struct VideoExportRequest {
  QString input;   ///< the video file
  QString output;  ///< the annotated video to write (.mp4, .mkv, ...)
  std::map<Task, QString> models;
  QString device = QStringLiteral("auto");
  QString dtype;
  std::optional<InputSize> inputSize;  ///< default: each model's own
  float keypointThreshold = 0.3f;
  std::optional<PersonBoxFile> personBoxes;  ///< the user's boxes for pose, per frame or for all
};

class VideoExport : public QObject {
  Q_OBJECT

 public:
  explicit VideoExport(QObject* parent = nullptr);
  /// Cancels a run in progress and waits for it (it stops after the frame at hand).
  ~VideoExport() override;

  /// Starts the run; `finished` follows. Refused (finished at once, with an error) while one runs.
  void start(const VideoExportRequest& request);
  void cancel();
  /// Quitting: stops the run between layers and removes the partial video (cancel keeps it).
  void abandon();
  bool isRunning() const { return running_; }

 Q_SIGNALS:
  /// `total` is -1 when the file does not say how many frames it has.
  void progress(qint64 done, qint64 total, double framesPerSecond);
  /// `error` is empty on success; after a cancel or a failure the frames done so far are in `output`.
  void finished(const QString& output, qint64 frames, const QString& error, bool cancelled);

 private:
  void join();

  std::thread thread_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  std::shared_ptr<std::atomic<bool>> abandon_;
  bool running_ = false;
};

}  // namespace sapiens::studio
