#include "inference_session.h"

#include "inference_worker.h"

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
  thread_.start();
}

InferenceSession::~InferenceSession() {
  supersede();
  thread_.quit();
  thread_.wait();
}

void InferenceSession::loadModel(Task task, const QString& path) {
  InferenceWorker* worker = worker_;
  const QString device = device_;
  QMetaObject::invokeMethod(
      worker, [worker, task, path, device] { worker->loadModel(task, path, device); }, Qt::QueuedConnection);
  // Results computed with the previous model no longer describe the current one.
  clearCache();
}

void InferenceSession::setModelPath(Task task, const QString& path) {
  models_[task] = {path, false, {}, {}};
  InferenceWorker* worker = worker_;
  QMetaObject::invokeMethod(
      worker, [worker, task, path] { worker->setModelPath(task, path); }, Qt::QueuedConnection);
  clearCache();
}

QString InferenceSession::cacheKey(const QString& imagePath, TaskSet tasks) {
  return QString::number(tasks) + QLatin1Char('|') + imagePath;
}

const FrameResult* InferenceSession::cached(const QString& imagePath, TaskSet tasks) const {
  auto found = cache_.constFind(cacheKey(imagePath, tasks));
  return found == cache_.constEnd() ? nullptr : &found.value();
}

void InferenceSession::clearCache() {
  cache_.clear();
}

void InferenceSession::supersede() {
  latestGeneration_->fetch_add(1);
}

void InferenceSession::request(const QString& imagePath, const cv::Mat& bgr, TaskSet tasks) {
  const quint64 generation = latestGeneration_->fetch_add(1) + 1;
  if (const FrameResult* hit = cached(imagePath, tasks)) {
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
  Q_EMIT started(imagePath, tasks);
  InferenceWorker* worker = worker_;
  const QString device = device_;
  QMetaObject::invokeMethod(
      worker,
      [worker, generation, imagePath, bgr, tasks, device] {
        worker->run(generation, imagePath, bgr, tasks, device);
      },
      Qt::QueuedConnection);
}

void InferenceSession::onFinished(quint64 generation, const QString& imagePath, unsigned int tasks,
                                  const FrameResult& result, double wallMs) {
  cache_.insert(cacheKey(imagePath, tasks), result);
  if (generation == latestGeneration_->load()) Q_EMIT resultReady(imagePath, tasks, result, wallMs, false);
  settle();
}

void InferenceSession::onFailed(quint64 generation, const QString& imagePath, const QString& reason) {
  if (generation == latestGeneration_->load()) Q_EMIT runFailed(imagePath, reason);
  settle();
}

void InferenceSession::onDropped(quint64) {
  settle();
}

void InferenceSession::settle() {
  if (--inFlight_ <= 0) {
    inFlight_ = 0;
    Q_EMIT idle();
  }
}

}  // namespace sapiens::studio
