#include "inference_worker.h"

#include "sapiens/common/log.h"
#include "sapiens/model/forward_interrupt.h"
#include "sapiens/pipeline/run_failure.h"
#include "sapiens/pipeline/task_analysis.h"
#include "sapiens/pipeline/task_models.h"

#include <fmt/format.h>
#include <opencv2/core/mat.hpp>

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
    ModelLoadRequest request;
    request.device = device.toStdString();
    request.dtype = dtype.toStdString();
    request.expectedTask = task;
    LoadedModel model = LoadedModel::load(path.toStdString(), request);
    const QString deviceName = QString::fromStdString(model.deviceName());
    const QString dtypeName = QString::fromStdString(model.dtypeName());
    logger().info("loaded the {} model {} ({}, {})", taskName(task), path.toStdString(),
                  deviceName.toStdString(), dtypeName.toStdString());
    models_.insert_or_assign(task, std::move(model));
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

const LoadedModel* InferenceWorker::modelFor(Task task, const QString& device, const QString& dtype) {
  if (auto pending = pendingPaths_.find(task); pending != pendingPaths_.end()) {
    const QString path = pending->second;  // a copy: loadModel erases the entry before it reports
    loadModel(task, path, device, dtype);
  }
  auto found = models_.find(task);
  return found == models_.end() ? nullptr : &found->second;
}

void InferenceWorker::run(quint64 generation, const QString& imagePath, const cv::Mat& bgr, TaskSet tasks,
                          const QString& device, const QString& dtype, double inputScale,
                          const std::vector<BoundingBox>& personBoxes) {
  const auto start = std::chrono::steady_clock::now();
  auto stale = [&] { return latestGeneration_->load() != generation; };
  FrameResult frame;
  // A task that fails leaves the others' results standing (its reason is in frame.taskErrors); only when
  // every task failed is it the run's failure.
  std::size_t ran = 0;
  for (Task task : headTasksInRunOrder()) {
    if (!contains(tasks, task)) continue;
    if (stale()) {
      Q_EMIT runDropped(generation);
      return;
    }
    ++ran;
    InputSize size;
    bool onGpu = false;
    try {
      const LoadedModel* model = modelFor(task, device, dtype);
      if (!model) {
        throw std::runtime_error("no " + std::string(taskName(task)) +
                                 " model is loaded (Models > Load checkpoint, or put one under the "
                                 "checkpoint root)");
      }
      size = scaledInputSize(defaultInputSize(model->architecture()), inputScale);
      onGpu = model->onGpu();
      analyzeTask(model->model(), bgr, frame, size, personBoxes);
    } catch (const ForwardInterrupted&) {
      Q_EMIT runDropped(generation);  // the session is going; nobody waits for this result
      return;
    } catch (const std::exception& e) {
      const RunFailure failure = classifyFailure(e);
      std::string reason = failure.message;
      // Said in the studio's terms: its Resolution is what a user can lower (there is no batch here).
      if (failure.outOfMemory)
        reason = fmt::format(
            "Not enough memory to run the {} model at {}x{}: choose a lower Resolution in the Compute "
            "toolbar{} ({})",
            taskName(task), size.height, size.width,
            onGpu ? ", a smaller model or the CPU" : " or a smaller model", reason);
      frame.taskErrors[task] = reason;
    }
  }
  for (const auto& [task, warning] : frame.warnings)
    logger().warn("{}: {}", imagePath.toStdString(), warning);
  for (const auto& [task, reason] : frame.taskErrors)
    logger().error("{}: {}: {}", imagePath.toStdString(), taskName(task), reason);
  if (ran > 0 && frame.taskErrors.size() == ran) {
    const std::string reason =
        ran > 1 ? "Every task failed: " + taskErrorsText(frame.taskErrors) : frame.taskErrors.begin()->second;
    Q_EMIT runFailed(generation, imagePath, QString::fromStdString(reason));
    return;
  }
  const double wallMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  Q_EMIT runFinished(generation, imagePath, tasks, frame, wallMs);
}

}  // namespace sapiens::studio
