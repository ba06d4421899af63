#pragma once
// Runs the task models on its own thread (see InferenceSession, which owns the thread). It owns one
// loaded model per task; checkpoints given by path are loaded on request or on first use. A run that
// became stale (its generation is no longer the latest) stops between tasks without a result.

#include "task_set.h"

#include "sapiens/model/loaded_model.h"
#include "sapiens/pipeline/input_size.h"
#include "sapiens/result/frame_result.h"

#include <opencv2/core/mat.hpp>

#include <QMetaType>
#include <QObject>
#include <QString>

#include <atomic>
#include <map>
#include <memory>
#include <vector>

namespace sapiens::studio {

/// `native` times `scale`, in whole patches: the input size of the Compute toolbar's Resolution.
InputSize scaledInputSize(InputSize native, double scale);

struct LoadedModelInfo {
  QString path;
  QString device;  ///< "cpu", "cuda:0"
  QString dtype;   ///< "fp32", "bf16"
};

class InferenceWorker : public QObject {
  Q_OBJECT

 public:
  /// `latestGeneration` is written by the GUI thread whenever a newer request supersedes older ones.
  explicit InferenceWorker(std::shared_ptr<const std::atomic<quint64>> latestGeneration);
  ~InferenceWorker() override;

  /// Loads `path` as the `task` model now on `device` in `dtype` (empty: the device's default),
  /// replacing the current one; a failure keeps the old model.
  void loadModel(Task task, const QString& path, const QString& device, const QString& dtype);
  /// Remembers `path` as the `task` model, loaded when a run first needs it; empty: none any more.
  void setModelPath(Task task, const QString& path);
  /// Runs `tasks` on `bgr` (seg before pose) at `inputScale` times each model's native input size. Pose takes
  /// `personBoxes` when there are any, else the boxes of this run's segmentation, else the detector's.
  void run(quint64 generation, const QString& imagePath, const cv::Mat& bgr, TaskSet tasks,
           const QString& device, const QString& dtype, double inputScale,
           const std::vector<BoundingBox>& personBoxes);

 Q_SIGNALS:
  void modelLoaded(int task, const QString& path, const QString& device, const QString& dtype);
  void modelFailed(int task, const QString& path, const QString& reason);
  void runFinished(quint64 generation, const QString& imagePath, unsigned int tasks,
                   const sapiens::FrameResult& result, double wallMs);
  void runFailed(quint64 generation, const QString& imagePath, const QString& reason);
  /// The run was dropped because a newer request arrived.
  void runDropped(quint64 generation);

 private:
  const LoadedModel* modelFor(Task task, const QString& device, const QString& dtype);

  std::shared_ptr<const std::atomic<quint64>> latestGeneration_;
  std::map<Task, LoadedModel> models_;
  std::map<Task, QString> pendingPaths_;
};

}  // namespace sapiens::studio
