#include "inference_session.h"

#include "inference_worker.h"
#include "thread_priority.h"

#include "sapiens/common/allocator.h"
#include "sapiens/common/log.h"
#include "sapiens/model/forward_interrupt.h"

#include <QMetaObject>

namespace sapiens::studio {

InferenceSession::InferenceSession(QObject* parent)
    : QObject(parent), latestGeneration_(std::make_shared<std::atomic<quint64>>(0)) {
  thread_.setObjectName(QStringLiteral("inference"));
  worker_ = new InferenceWorker(latestGeneration_);
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);

  // Worker signals cross threads: queued, so the slots run on the GUI thread.
  connect(worker_, &InferenceWorker::modelLoaded, this,
          [this](int task, const QString& path, const QString& device, const QString& dtype) {
            TaskModelState& state = models_[Task(task)];
            state = {path, true, device, dtype};
            Q_EMIT modelLoaded(Task(task), path);
          });
  connect(worker_, &InferenceWorker::modelFailed, this,
          [this](int task, const QString& path, const QString& reason) {
            Q_EMIT modelFailed(Task(task), path, reason);
          });
  connect(worker_, &InferenceWorker::runFinished, this, &InferenceSession::onFinished);
  connect(worker_, &InferenceWorker::runFailed, this, &InferenceSession::onFailed);
  connect(worker_, &InferenceWorker::runDropped, this, &InferenceSession::onDropped);
  idleRelease_.setSingleShot(true);
  idleRelease_.setInterval(kIdleReleaseMs);
  connect(&idleRelease_, &QTimer::timeout, this, [this] {
    if (inFlight_ > 0) return;
    QMetaObject::invokeMethod(
        worker_,
        [this] {
          const long long released = memory::releaseFreeMemory();
          logger().debug("idle: gave {} MB of freed memory back to the system", released >> 20);
          // `this` outlives the worker's thread: the destructor joins it.
          QMetaObject::invokeMethod(
              this, [this, released] { Q_EMIT memoryReleased(released); }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
  });
  thread_.start();
  // First in the worker's queue: before it starts any thread of its own (OpenMP, OpenBLAS), which inherit
  // its priority.
  QMetaObject::invokeMethod(worker_, &runInBackgroundPriority, Qt::QueuedConnection);
  // A forward pass under way when the window goes stops between layers: nobody waits for the rest.
  QMetaObject::invokeMethod(
      worker_, [flag = &closing_] { setForwardInterruptFlag(flag); }, Qt::QueuedConnection);
}

InferenceSession::~InferenceSession() {
  closing_ = true;
  supersede();
  thread_.quit();
  thread_.wait();
}

void InferenceSession::loadModel(Task task, const QString& path) {
  InferenceWorker* worker = worker_;
  const QString device = device_;
  const QString dtype = dtype_;
  QMetaObject::invokeMethod(
      worker, [worker, task, path, device, dtype] { worker->loadModel(task, path, device, dtype); },
      Qt::QueuedConnection);
  // Results computed with the previous model no longer describe the current one.
  clearCache();
}

void InferenceSession::setCompute(const QString& device, const QString& dtype) {
  if (device == device_ && dtype == dtype_) return;
  device_ = device;
  dtype_ = dtype;
  // Models not loaded yet load there when first needed (the device travels with each run).
  for (const auto& [task, state] : models_) {
    if (state.loaded) loadModel(task, state.path);
  }
  clearCache();
}

void InferenceSession::setInputScale(double scale) {
  if (scale == inputScale_) return;
  inputScale_ = scale;
  clearCache();
}

void InferenceSession::setModelPath(Task task, const QString& path) {
  models_[task] = {path, false, {}, {}};
  InferenceWorker* worker = worker_;
  QMetaObject::invokeMethod(
      worker, [worker, task, path] { worker->setModelPath(task, path); }, Qt::QueuedConnection);
  clearCache();
}

QString InferenceSession::cacheKey(const QString& imagePath, TaskSet tasks,
                                   const std::vector<BoundingBox>& personBoxes) {
  QString key = QString::number(tasks);
  for (const BoundingBox& box : personBoxes)
    key += QStringLiteral("|%1,%2,%3,%4").arg(box.x1).arg(box.y1).arg(box.x2).arg(box.y2);
  return key + QStringLiteral("|") + imagePath;
}

const FrameResult* InferenceSession::cached(const QString& imagePath, TaskSet tasks,
                                            const std::vector<BoundingBox>& personBoxes) const {
  auto found = cache_.constFind(cacheKey(imagePath, tasks, personBoxes));
  return found == cache_.constEnd() ? nullptr : &found.value();
}

void InferenceSession::clearCache() {
  cache_.clear();
  cacheOrder_.clear();
  cacheBytes_ = 0;
  // Runs in flight were asked of the models being replaced: their results are shown but not kept.
  pendingKeys_.clear();
}

void InferenceSession::supersede() {
  latestGeneration_->fetch_add(1);
}

void InferenceSession::request(const QString& imagePath, const cv::Mat& bgr, TaskSet tasks,
                               const std::vector<BoundingBox>& personBoxes) {
  const quint64 generation = latestGeneration_->fetch_add(1) + 1;
  if (const FrameResult* hit = cached(imagePath, tasks, personBoxes)) {
    const FrameResult result = *hit;
    QMetaObject::invokeMethod(
        this,
        [this, generation, imagePath, tasks, result] {
          if (generation == latestGeneration_->load())
            Q_EMIT resultReady(imagePath, tasks, result, 0.0, true);
        },
        Qt::QueuedConnection);
    return;
  }
  ++inFlight_;
  idleRelease_.stop();
  Q_EMIT started(imagePath, tasks);
  InferenceWorker* worker = worker_;
  const QString device = device_;
  const QString dtype = dtype_;
  const double scale = inputScale_;
  const QString key = cacheKey(imagePath, tasks, personBoxes);
  QMetaObject::invokeMethod(
      worker,
      [worker, generation, imagePath, bgr, tasks, device, dtype, scale, personBoxes] {
        worker->run(generation, imagePath, bgr, tasks, device, dtype, scale, personBoxes);
      },
      Qt::QueuedConnection);
  pendingKeys_[generation] = key;
}

void InferenceSession::onFinished(quint64 generation, const QString& imagePath, unsigned int tasks,
                                  const FrameResult& result, double wallMs) {
  const auto key = pendingKeys_.find(generation);
  if (key != pendingKeys_.end()) {
    insertCached(key->second, result);
    pendingKeys_.erase(key);
  }
  if (generation == latestGeneration_->load()) Q_EMIT resultReady(imagePath, tasks, result, wallMs, false);
  settle();
}

void InferenceSession::insertCached(const QString& key, const FrameResult& result) {
  if (cache_.contains(key)) return;
  cache_.insert(key, result);
  cacheOrder_.push_back(key);
  cacheBytes_ += result.bytes();
  // A video fills the cache frame after frame: the oldest results go first.
  while (cacheBytes_ > kCacheBudgetBytes && cacheOrder_.size() > 1) {
    const auto oldest = cache_.find(cacheOrder_.front());
    cacheBytes_ -= oldest.value().bytes();
    cache_.erase(oldest);
    cacheOrder_.pop_front();
  }
}

void InferenceSession::onFailed(quint64 generation, const QString& imagePath, const QString& reason) {
  pendingKeys_.erase(generation);
  if (generation == latestGeneration_->load()) Q_EMIT runFailed(imagePath, reason);
  settle();
}

void InferenceSession::onDropped(quint64 generation) {
  pendingKeys_.erase(generation);
  settle();
}

void InferenceSession::settle() {
  if (--inFlight_ <= 0) {
    inFlight_ = 0;
    idleRelease_.start();
    Q_EMIT idle();
  }
}

}  // namespace sapiens::studio
