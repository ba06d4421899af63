#include "finetune_worker.h"

#include "sapiens/common/allocator.h"
#include "sapiens/common/log.h"
#include "sapiens/export/map_png.h"
#include "sapiens/export/matte_png.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/model/forward_interrupt.h"
#include "sapiens/result/keypoint_metadata.h"

#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <QMetaObject>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <utility>

namespace sapiens::studio {

namespace {

constexpr std::size_t kFeatureCacheBytes = std::size_t(1) << 30;

// `labels` class indices coloured with `classes` and blended over `bgr` (background left as is).
cv::Mat blendLabels(const cv::Mat& bgr, const cv::Mat& labels, const std::vector<LabelClass>& classes) {
  cv::Mat out = bgr.clone();
  for (int y = 0; y < std::min(labels.rows, out.rows); ++y) {
    const auto* label = labels.ptr<std::uint8_t>(y);
    auto* row = out.ptr<cv::Vec3b>(y);
    for (int x = 0; x < std::min(labels.cols, out.cols); ++x) {
      const std::size_t c = label[x];
      if (c == 0 || c >= classes.size()) continue;
      const Rgb& color = classes[c].color;
      for (int k = 0; k < 3; ++k) row[x][k] = std::uint8_t((row[x][k] + color[2 - k]) / 2);
    }
  }
  return out;
}

// Each keypoint at its decoded place, in its class's colour.
cv::Mat drawKeypoints(const cv::Mat& bgr, const PoseInstance& pose, const std::vector<LabelClass>& classes) {
  cv::Mat out = bgr.clone();
  for (std::size_t i = 0; i < pose.keypoints.size(); ++i) {
    const auto& [x, y] = pose.keypoints[i];
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    const Rgb color = i < classes.size() ? classes[i].color : Rgb{255, 200, 0};
    cv::circle(out, cv::Point(int(x), int(y)), 2, cv::Scalar(color[2], color[1], color[0]), cv::FILLED);
  }
  return out;
}

// The head's prediction drawn as the studio's views draw that task.
cv::Mat previewImage(const cv::Mat& bgr, const FrameResult& frame, const std::vector<LabelClass>& classes) {
  if (!frame.segLabels.empty()) return blendLabels(bgr, frame.segLabels, classes);
  if (!frame.poses.empty()) return drawKeypoints(bgr, frame.poses.front(), classes);
  if (!frame.normal.empty()) return normalMapImage(frame.normal);
  if (!frame.albedo.empty()) return albedoImage(frame.albedo);
  if (!frame.pointmap.empty()) return depthImage(frame.pointmap, {}, foregroundDepthRange(frame.pointmap));
  if (!frame.alpha.empty()) return mattingComposite(bgr, frame.alpha, frame.foreground);
  return bgr;
}

QImage toQImage(const cv::Mat& bgr) {
  return QImage(bgr.data, bgr.cols, bgr.rows, int(bgr.step), QImage::Format_BGR888).copy();
}

}  // namespace

FineTuneWorker::FineTuneWorker() = default;
FineTuneWorker::~FineTuneWorker() = default;

void FineTuneWorker::rearm() {
  pauseRequested_ = false;
  stopRequested_ = false;
  control_.reset();
}

void FineTuneWorker::pause() {
  pauseRequested_ = true;
}

void FineTuneWorker::resume() {
  pauseRequested_ = false;
  wake_.notify_all();
}

void FineTuneWorker::stop() {
  stopRequested_ = true;
  control_.stop();
  wake_.notify_all();
}

void FineTuneWorker::abandon() {
  abandoned_ = true;
  stop();
}

void FineTuneWorker::requestSave(const QString& path, bool fullModel) {
  {
    std::lock_guard lock(mutex_);
    saves_.emplace_back(path, fullModel);
  }
  wake_.notify_all();
  // Idle: the queued call runs it. Training: the progress callback does (and this finds nothing left).
  QMetaObject::invokeMethod(
      this, [this] { runPendingSaves(); }, Qt::QueuedConnection);
}

void FineTuneWorker::runPendingSaves() {
  for (;;) {
    std::pair<QString, bool> save;
    {
      std::lock_guard lock(mutex_);
      if (saves_.empty()) return;
      save = saves_.front();
      saves_.pop_front();
    }
    QString error;
    if (!tuner_) {
      error = tr("nothing has been trained yet");
    } else {
      try {
        tuner_->save(save.first.toStdString(), save.second);
        logger().info("Saved the fine-tuned {} at step {} to {}", save.second ? "model" : "head",
                      tuner_->step(), save.first.toStdString());
      } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
        logger().error("Cannot save the fine-tuned model: {}", e.what());
      }
    }
    Q_EMIT saved(save.first, error);
  }
}

bool FineTuneWorker::betweenSteps(int step) {
  runPendingSaves();
  if (!pauseRequested_ || stopRequested_) return !stopRequested_;
  Q_EMIT pausedAt(step);
  logger().info("Fine-tuning paused at step {}", step);
  while (pauseRequested_ && !stopRequested_) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(200),
                     [this] { return !pauseRequested_ || stopRequested_ || !saves_.empty(); });
    }
    runPendingSaves();
  }
  if (!stopRequested_) Q_EMIT resumed();
  return !stopRequested_;
}

void FineTuneWorker::train(const FineTuneJob& job) {
  setForwardInterruptFlag(&abandoned_);  // this thread's; the worker outlives its passes
  tuner_.reset();
  previewSample_.reset();
  try {
    Q_EMIT status(tr("Opening the label set..."));
    LabelSet labels = openLabelSet(job.labelSetFolder.toStdString());
    Q_EMIT status(tr("Loading %1...").arg(job.modelPath));
    if (!cache_) cache_ = std::make_shared<FeatureCache>(kFeatureCacheBytes);
    tuner_ = FineTuner::fromCheckpoint(job.modelPath.toStdString(), std::move(labels), job.settings, cache_);
  } catch (const std::exception& e) {
    tuner_.reset();
    logger().error("Fine-tuning cannot start: {}", e.what());
    Q_EMIT failed(QString::fromStdString(e.what()));
    return;
  }
  runTraining(true);
}

void FineTuneWorker::continueTraining() {
  if (!tuner_) {
    Q_EMIT failed(tr("Nothing to continue: start training first"));
    return;
  }
  runTraining(false);
}

void FineTuneWorker::discard() {
  tuner_.reset();
  previewSample_.reset();
}

void FineTuneWorker::runTraining(bool fresh) {
  bool ready = !fresh;  // the features computed, the rate chosen
  try {
    if (fresh) {
      Q_EMIT status(tr("Computing backbone features..."));
      const bool prepared = tuner_->prepare(
          control_,
          [this](std::size_t done, std::size_t total) {
            Q_EMIT preparing(done, total);
            if (!betweenSteps(0)) control_.stop();
          },
          [this](std::size_t done, std::size_t total, const LearningRateTrial& trial) {
            Q_EMIT status(tr("Choosing the learning rate: %1 of %2 rates tried (%3: loss %4)")
                              .arg(done)
                              .arg(total)
                              .arg(trial.rate, 0, 'e', 0)
                              .arg(trial.loss, 0, 'f', 4));
            if (!betweenSteps(0)) control_.stop();
          });
      if (!prepared) {
        tuner_.reset();
        Q_EMIT finished(true, 0, tr("Stopped while preparing"));
        return;
      }
      ready = true;
      // The preview frame: the first held-out frame as labelled, else the first training frame.
      const auto& samples = tuner_->samples();
      for (int pass = 0; pass < 2 && !previewSample_; ++pass) {
        for (std::size_t i = 0; i < samples.size(); ++i) {
          if (samples[i].variant == 0 && samples[i].validation == (pass == 0)) {
            previewSample_ = i;
            previewHeldOut_ = pass == 0;
            break;
          }
        }
      }
      if (previewSample_) previewPicture_ = tuner_->sampleImage(*previewSample_);
      emitPreview(tuner_->step(), true);
      const auto& trials = tuner_->learningRateTrials();
      Q_EMIT learningRateChosen(
          tuner_->settings().learningRate,
          trials.empty() ? QString() : QString::fromStdString(describeLearningRateTrials(trials)));
    }
    const MetricInfo metric = tuner_->metric();
    const std::string metricTitle =
        metric.scope.empty() ? metric.name : metric.name + " over " + metric.scope;
    Q_EMIT trainingStarted(QString::fromStdString(metricTitle), metric.higherIsBetter,
                           tuner_->settings().steps, tuner_->step());
    const bool hasValidation = std::any_of(tuner_->samples().begin(), tuner_->samples().end(),
                                           [](const SampleInfo& s) { return s.validation; });
    const TrainingReport report = tuner_->train(control_, [&](const TrainingProgress& p) {
      const bool evaluated = p.validation.has_value();
      Q_EMIT progress(p.step, p.totalSteps, p.trainLoss, p.learningRate, p.stepsPerSecond, p.secondsLeft,
                      evaluated, evaluated ? p.validation->loss : 0.0, evaluated ? p.validation->metric : 0.0,
                      hasValidation, QString::fromStdString(p.snapshot));
      if (evaluated) emitPreview(p.step);
      if (p.step < p.totalSteps && !betweenSteps(p.step)) control_.stop();
    });
    emitPreview(report.steps);
    runPendingSaves();
    const Evaluation& before = report.validationBefore ? *report.validationBefore : report.trainingBefore;
    const Evaluation& after = report.validationAfter ? *report.validationAfter : report.trainingAfter;
    const QString summary = tr("%1 steps%2: %3 on the %4 frames, training loss %5 -> %6")
                                .arg(report.steps)
                                .arg(report.stopped ? tr(" (stopped)") : QString())
                                .arg(QString::fromStdString(describeMetricChange(metric, before, after)))
                                .arg(report.validationAfter ? tr("validation") : tr("training"))
                                .arg(report.firstLoss, 0, 'f', 4)
                                .arg(report.lastLoss, 0, 'f', 4);
    logger().info("Fine-tuning: {}", summary.toStdString());
    Q_EMIT finished(report.stopped, report.steps, summary);
    memory::releaseFreeMemory();  // the training pass's activations are gone
  } catch (const ForwardInterrupted&) {
    // Quitting (abandon) interrupts a backbone pass between its layers: the run stopped, it did not fail.
    const int steps = ready && tuner_ ? tuner_->step() : 0;
    if (!ready) tuner_.reset();  // prepared in part
    logger().info("Fine-tuning stopped in the middle of a backbone pass");
    Q_EMIT finished(true, steps, ready ? tr("Stopped at step %1").arg(steps) : tr("Stopped while preparing"));
  } catch (const TrainingDivergedError& e) {
    logger().error("Fine-tuning diverged: {}", e.what());
    Q_EMIT diverged(e.step(), e.keptStep(), QString::fromStdString(e.what()));
  } catch (const std::exception& e) {
    logger().error("Fine-tuning failed: {}", e.what());
    Q_EMIT failed(QString::fromStdString(e.what()));
  }
}

void FineTuneWorker::emitPreview(int step, bool beforeTraining) {
  if (!tuner_ || !previewSample_ || previewPicture_.empty()) return;
  try {
    const FrameResult frame = tuner_->predictFrame(*previewSample_);
    Q_EMIT preview(toQImage(previewImage(previewPicture_, frame, tuner_->classes())), step, previewHeldOut_,
                   beforeTraining);
  } catch (const std::exception& e) {
    logger().warn("Fine-tuning preview failed: {}", e.what());
  }
}

}  // namespace sapiens::studio
