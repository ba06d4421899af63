#pragma once
// The GUI side of inference: owns the InferenceWorker and its thread, numbers requests so that results
// for an image the user has left are dropped, and caches results per image path and task set. Nothing
// here waits for the worker except the destructor.

#include "task_set.h"

#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QHash>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>

#include <atomic>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <vector>

namespace sapiens::studio {

class InferenceWorker;

/// What is known about the model of one task.
struct TaskModelState {
  QString path;  ///< empty: none
  bool loaded = false;
  QString device;
  QString dtype;
};

class InferenceSession : public QObject {
  Q_OBJECT

 public:
  explicit InferenceSession(QObject* parent = nullptr);
  /// Asks a run in progress to stop after its current task and waits for the thread.
  ~InferenceSession() override;

  /// "auto" (CUDA when present, else CPU), "cpu", "cuda:N", and "fp32", "bf16", "fp16" or empty (the
  /// device's default). Loaded models are loaded again there in the background (modelLoaded or
  /// modelFailed follows for each); later loads use it too.
  void setCompute(const QString& device, const QString& dtype);
  QString device() const { return device_; }
  QString dtype() const { return dtype_; }
  /// The models' input size as a fraction of their native one (1: native), rounded to whole patches.
  /// Cached results were made at the old size: they are dropped.
  void setInputScale(double scale);
  double inputScale() const { return inputScale_; }

  /// Loads a checkpoint for `task` now (in the background); modelLoaded or modelFailed follows.
  void loadModel(Task task, const QString& path);
  /// Remembers a discovered checkpoint, loaded when a run first needs it.
  void setModelPath(Task task, const QString& path);
  const std::map<Task, TaskModelState>& models() const { return models_; }

  /// Starts running `tasks` on `bgr`, pose in `personBoxes` when given (the user's boxes); a cached
  /// result is delivered at once (queued). Supersedes every earlier request.
  void request(const QString& imagePath, const cv::Mat& bgr, TaskSet tasks,
               const std::vector<BoundingBox>& personBoxes = {});
  /// Drops whatever is in flight (the user moved to another image).
  void supersede();
  bool isBusy() const { return inFlight_ > 0; }
  /// The cached result for `imagePath`, exactly `tasks` and `personBoxes`, or nullptr.
  const FrameResult* cached(const QString& imagePath, TaskSet tasks,
                            const std::vector<BoundingBox>& personBoxes = {}) const;
  void clearCache();
  /// How long after the last run the heap's free memory is given back (memory::releaseFreeMemory).
  void setIdleReleaseDelay(int ms) { idleRelease_.setInterval(ms); }

 Q_SIGNALS:
  void modelLoaded(sapiens::Task task, const QString& path);
  void modelFailed(sapiens::Task task, const QString& path, const QString& reason);
  void started(const QString& imagePath, unsigned int tasks);
  /// `wallMs` is the whole run; the result's inferenceMs has the time per task. `fromCache` when no model
  /// ran.
  void resultReady(const QString& imagePath, unsigned int tasks, const sapiens::FrameResult& result,
                   double wallMs, bool fromCache);
  void runFailed(const QString& imagePath, const QString& reason);
  /// Nothing is running any more.
  void idle();
  /// The idle release ran; `bytes`: how much the resident set shrank.
  void memoryReleased(qint64 bytes);

 private:
  void onFinished(quint64 generation, const QString& imagePath, unsigned int tasks, const FrameResult& result,
                  double wallMs);
  void onFailed(quint64 generation, const QString& imagePath, const QString& reason);
  void onDropped(quint64 generation);
  void settle();
  void insertCached(const QString& key, const FrameResult& result);
  static QString cacheKey(const QString& imagePath, TaskSet tasks,
                          const std::vector<BoundingBox>& personBoxes);

  QThread thread_;
  InferenceWorker* worker_ = nullptr;  // lives on thread_, deleted when it finishes
  // The heap keeps what the largest pass needed (memory::keepLargeBlocksInHeap); after this long without
  // a run it is given back, on the worker's thread.
  QTimer idleRelease_;
  static constexpr int kIdleReleaseMs = 20000;
  std::shared_ptr<std::atomic<quint64>> latestGeneration_;
  std::atomic<bool> closing_{false};  // the worker thread's forward interrupt: set by the destructor
  int inFlight_ = 0;
  QString device_ = QStringLiteral("auto");
  QString dtype_;
  double inputScale_ = 1.0;
  std::map<Task, TaskModelState> models_;
  // Results kept for going back to a picture or a video frame, oldest dropped first past the budget.
  static constexpr std::size_t kCacheBudgetBytes = std::size_t(1) << 30;
  QHash<QString, FrameResult> cache_;
  std::deque<QString> cacheOrder_;
  std::size_t cacheBytes_ = 0;
  std::map<quint64, QString> pendingKeys_;  // generation -> cache key of each run in flight
};

}  // namespace sapiens::studio
