#include "inference_worker.h"

#include "sapiens/common/log.h"
#include "sapiens/model/compute_options.h"
#include "sapiens/pipeline/batch_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <utility>

namespace sapiens::studio {

InputSize scaledInputSize(InputSize native, double scale) {
  // Whole 16-pixel patches, at least one, as the backbone's patch embedding needs.
  const auto scaled = [scale](int side) { return std::max(16, int(std::lround(side * scale / 16.0)) * 16); };
  return {scaled(native.width), scaled(native.height)};
}

InferenceWorker::InferenceWorker(std::shared_ptr<const std::atomic<quint64>> latestGeneration)
    : latestGeneration_(std::move(latestGeneration)) {
  qRegisterMetaType<sapiens::FrameResult>();
  qRegisterMetaType<cv::Mat>();
}

InferenceWorker::~InferenceWorker() = default;

void InferenceWorker::loadModel(Task task, const QString& path, const QString& device, const QString& dtype) {
  pendingPaths_.erase(task);
  try {
    ModelOptions options;
    options.device = device.toStdString();
    if (!dtype.isEmpty()) options.dtype = parseComputeDtype(dtype.toStdString());
    options.expectedTask = task;
    auto model = std::make_unique<Model>(Model::load(path.toStdString(), options));
    const QString deviceName = QString::fromStdString(model->device().str());
    const QString dtypeName = QString::fromStdString(computeDtypeName(model->dtype()));
    logger().info("loaded the {} model {} ({}, {})", taskName(task), path.toStdString(),
                  deviceName.toStdString(), dtypeName.toStdString());
    models_[task] = std::move(model);
    Q_EMIT modelLoaded(int(task), path, deviceName, dtypeName);
  } catch (const std::exception& e) {
    logger().error("cannot load the {} model: {}", taskName(task), e.what());
    Q_EMIT modelFailed(int(task), path, QString::fromStdString(e.what()));
  }
}

void InferenceWorker::setModelPath(Task task, const QString& path) {
  if (path.isEmpty()) {  // no model for the task any more
    pendingPaths_.erase(task);
    models_.erase(task);
    return;
  }
  pendingPaths_[task] = path;
}

const Model* InferenceWorker::modelFor(Task task, const QString& device, const QString& dtype) {
  if (auto pending = pendingPaths_.find(task); pending != pendingPaths_.end()) {
    const QString path = pending->second;  // a copy: loadModel erases the entry before it reports
    loadModel(task, path, device, dtype);
  }
  auto found = models_.find(task);
  return found == models_.end() ? nullptr : found->second.get();
}

void InferenceWorker::run(quint64 generation, const QString& imagePath, const cv::Mat& bgr, TaskSet tasks,
                          const QString& device, const QString& dtype, double inputScale,
                          const std::vector<BoundingBox>& personBoxes) {
  const auto start = std::chrono::steady_clock::now();
  auto stale = [&] { return latestGeneration_->load() != generation; };
  FrameResult frame;
  try {
    for (Task task : kStudioTasks) {
      if (!contains(tasks, task)) continue;
      if (stale()) {
        Q_EMIT runDropped(generation);
        return;
      }
      const Model* model = modelFor(task, device, dtype);
      if (!model) {
        throw std::runtime_error("no " + std::string(taskName(task)) +
                                 " model is loaded (Models > Load checkpoint, or put one under the "
                                 "checkpoint root)");
      }
      analyzeTask(*model, bgr, frame, scaledInputSize(defaultInputSize(*model), inputScale), personBoxes);
    }
  } catch (const std::exception& e) {
    logger().error("{}: {}", imagePath.toStdString(), e.what());
    Q_EMIT runFailed(generation, imagePath, QString::fromStdString(e.what()));
    return;
  }
  const double wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  Q_EMIT runFinished(generation, imagePath, tasks, frame, wallMs);
}

}  // namespace sapiens::studio
