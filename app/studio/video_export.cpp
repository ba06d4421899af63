#include "video_export.h"

#include "thread_priority.h"

#include "sapiens/common/allocator.h"
#include "sapiens/common/log.h"
#include "sapiens/model/forward_interrupt.h"
#include "sapiens/run/video_run.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QMetaObject>
#include <QTemporaryDir>

#include <exception>

namespace sapiens::studio {

VideoExport::VideoExport(QObject* parent) : QObject(parent) {}

VideoExport::~VideoExport() {
  cancel();
  join();
}

void VideoExport::join() {
  if (thread_.joinable()) thread_.join();
}

void VideoExport::cancel() {
  if (cancel_) cancel_->store(true);
}

void VideoExport::abandon() {
  if (abandon_) abandon_->store(true);
  cancel();
}

void VideoExport::start(const VideoExportRequest& request) {
  if (running_) {
    Q_EMIT finished(request.output, 0, tr("An annotated video is already being written"), false);
    return;
  }
  join();  // the previous run has finished; its thread may still be returning
  running_ = true;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  abandon_ = std::make_shared<std::atomic<bool>>(false);
  const auto cancel = cancel_;
  const auto abandon = abandon_;
  thread_ = std::thread([this, request, cancel, abandon] {
    runInBackgroundPriority();
    setForwardInterruptFlag(abandon.get());
    QString error;
    qint64 frames = 0;
    bool cancelled = false;
    try {
      // The run's keypoints JSON and manifest are not wanted here: they go to a folder beside the video
      // (same file system, so the finished video is a rename away) that is removed afterwards.
      QTemporaryDir scratch(
          QFileInfo(request.output).absoluteDir().filePath(QStringLiteral(".sapiens-export-XXXXXX")));
      if (!scratch.isValid())
        throw std::runtime_error("cannot write in " + QFileInfo(request.output).absolutePath().toStdString() +
                                 ": " + scratch.errorString().toStdString());
      VideoRunOptions options;
      options.input = request.input.toStdString();
      options.outputDir = scratch.path().toStdString();
      options.videoOut = request.output.toStdString();
      options.perFrameFiles = false;
      options.exports.keypointThreshold = request.keypointThreshold;
      for (const auto& [task, path] : request.models) {
        options.models.tasks.push_back(task);
        options.models.modelPaths[task] = path.toStdString();
      }
      options.models.device = request.device.toStdString();
      options.models.dtype = request.dtype.toStdString();
      options.models.inputSize = request.inputSize;
      if (request.personBoxes) {
        options.personBoxes = request.personBoxes->everyFrame;
        options.personBoxesByFrame = request.personBoxes->byFrame;
      }
      VideoRunCallbacks callbacks;
      callbacks.isCancelled = [cancel] { return cancel->load(); };
      callbacks.onProgress = [this](const VideoRunProgress& progress) {
        const qint64 done = progress.stats.processed;
        const qint64 total = progress.expectedFrames;
        const double fps = progress.stats.framesPerSecond();
        QMetaObject::invokeMethod(
            this, [this, done, total, fps] { Q_EMIT this->progress(done, total, fps); },
            Qt::QueuedConnection);
      };
      const VideoRunSummary summary = runVideo(options, callbacks);
      frames = summary.stats.processed;
      cancelled = summary.stats.cancelled;
      if (!summary.stats.error.empty()) {
        error = QString::fromStdString(summary.stats.error);
      } else if (!summary.taskErrors.empty()) {
        error = QString::fromStdString(summary.taskErrors.front());
      } else if (summary.annotatedVideo.empty() && !cancelled) {
        error = tr("no frame could be written to %1").arg(request.output);
      }
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    if (abandon->load()) {
      QFile::remove(request.output);
      logger().info("annotated video {}: stopped by quitting, the partial file removed",
                    request.output.toStdString());
    } else if (!error.isEmpty()) {
      logger().error("annotated video {}: {}", request.output.toStdString(), error.toStdString());
    }
    memory::releaseFreeMemory();  // the models and frames of the export are gone
    // `this` outlives the thread: the destructor joins it.
    QMetaObject::invokeMethod(
        this,
        [this, output = request.output, frames, error, cancelled] {
          running_ = false;
          Q_EMIT finished(output, frames, error, cancelled);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace sapiens::studio
