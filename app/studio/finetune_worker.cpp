#include "finetune_worker.h"

#include "sapiens/common/allocator.h"
#include "sapiens/common/log.h"
#include "sapiens/export/keypoint_metadata.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/model/model.h"
#include "sapiens/pipeline/preprocess.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <QMetaObject>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

namespace sapiens::studio {

namespace {

constexpr std::size_t kFeatureCacheBytes = std::size_t(1) << 30;

// The network input (1, 3, H, W), normalised, back to an 8-bit RGB picture.
QImage inputPicture(const at::Tensor& input) {
  const at::Tensor mean =
      at::tensor(std::vector<float>(kInputMeanRgb.begin(), kInputMeanRgb.end())).view({1, 3, 1, 1});
  const at::Tensor stddev =
      at::tensor(std::vector<float>(kInputStdRgb.begin(), kInputStdRgb.end())).view({1, 3, 1, 1});
  const at::Tensor rgb = (input.to(at::kFloat).cpu() * stddev + mean)
                             .clamp(0, 255)
                             .round()
                             .to(at::kByte)[0]
                             .permute({1, 2, 0})
                             .contiguous();
  const int h = int(rgb.size(0)), w = int(rgb.size(1));
  return QImage(rgb.data_ptr<std::uint8_t>(), w, h, w * 3, QImage::Format_RGB888).copy();
}

// `labels` (H, W) class indices coloured with `classes` and blended over `picture`.
QImage blendLabels(const QImage& picture, const at::Tensor& labels, const std::vector<LabelClass>& classes) {
  QImage out = picture.convertToFormat(QImage::Format_RGB888);
  const at::Tensor l = labels.to(at::kLong).contiguous();
  const auto* data = l.data_ptr<std::int64_t>();
  const int h = int(l.size(0)), w = int(l.size(1));
  for (int y = 0; y < std::min(h, out.height()); ++y) {
    std::uint8_t* row = out.scanLine(y);
    for (int x = 0; x < std::min(w, out.width()); ++x) {
      const std::int64_t c = data[std::int64_t(y) * w + x];
      if (c <= 0 || c >= std::int64_t(classes.size())) continue;  // background left as is
      for (int k = 0; k < 3; ++k) row[3 * x + k] = std::uint8_t((row[3 * x + k] + classes[c].color[k]) / 2);
    }
  }
  return out;
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
  tuner_.reset();
  previewSample_.reset();
  try {
    Q_EMIT status(tr("Opening the label set..."));
    LabelSet labels = openLabelSet(job.labelSetFolder.toStdString());
    Q_EMIT status(tr("Loading %1...").arg(job.modelPath));
    ModelOptions options;
    options.dtype = at::kFloat;  // training keeps float32 weights
    options.expectedTask = labels.task;
    Model model = Model::load(job.modelPath.toStdString(), options);
    if (!cache_) cache_ = std::make_shared<FeatureCache>(kFeatureCacheBytes);
    tuner_ = std::make_unique<FineTuner>(std::move(model), std::move(labels), job.settings, cache_);
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
      if (previewSample_) previewPicture_ = inputPicture(tuner_->sampleInput(*previewSample_));
      emitPreview(tuner_->step(), true);
      const auto& trials = tuner_->learningRateTrials();
      Q_EMIT learningRateChosen(
          tuner_->settings().learningRate,
          trials.empty() ? QString() : QString::fromStdString(describeLearningRateTrials(trials)));
    }
    const MetricInfo metric = tuner_->metric();
    Q_EMIT trainingStarted(QString::fromStdString(metric.name), metric.higherIsBetter,
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
    const QString summary = tr("%1 steps%2: %3 %4 -> %5 on the %6 frames, training loss %7 -> %8")
                                .arg(report.steps)
                                .arg(report.stopped ? tr(" (stopped)") : QString())
                                .arg(QString::fromStdString(metric.name))
                                .arg(before.metric, 0, 'f', 4)
                                .arg(after.metric, 0, 'f', 4)
                                .arg(report.validationAfter ? tr("validation") : tr("training"))
                                .arg(report.firstLoss, 0, 'f', 4)
                                .arg(report.lastLoss, 0, 'f', 4);
    logger().info("Fine-tuning: {}", summary.toStdString());
    Q_EMIT finished(report.stopped, report.steps, summary);
    memory::releaseFreeMemory();  // the training pass's activations are gone
  } catch (const TrainingDivergedError& e) {
    logger().error("Fine-tuning diverged: {}", e.what());
    Q_EMIT diverged(e.step(), e.keptStep(), QString::fromStdString(e.what()));
  } catch (const std::exception& e) {
    logger().error("Fine-tuning failed: {}", e.what());
    Q_EMIT failed(QString::fromStdString(e.what()));
  }
}

void FineTuneWorker::emitPreview(int step, bool beforeTraining) {
  if (!tuner_ || !previewSample_ || previewPicture_.isNull()) return;
  try {
    const ModelOutputs outputs = tuner_->predict(*previewSample_);
    const int h = previewPicture_.height(), w = previewPicture_.width();
    QImage image;
    if (outputs.contains("seg_logits")) {
      const at::Tensor logits =
          at::upsample_bilinear2d(outputs.get("seg_logits").to(at::kFloat).cpu(), {h, w}, false);
      image = blendLabels(previewPicture_, logits.argmax(1)[0], tuner_->classes());
    } else if (outputs.contains("pose_heatmaps")) {
      const at::Tensor heatmaps = outputs.get("pose_heatmaps").to(at::kFloat).cpu()[0];
      const std::int64_t k = heatmaps.size(0), hh = heatmaps.size(1), hw = heatmaps.size(2);
      const at::Tensor flat = heatmaps.reshape({k, hh * hw});
      const at::Tensor best = flat.argmax(1).contiguous();
      const auto* index = best.data_ptr<std::int64_t>();
      image = previewPicture_.convertToFormat(QImage::Format_RGB888);
      cv::Mat canvas(image.height(), image.width(), CV_8UC3, image.bits(), image.bytesPerLine());
      const auto classes = tuner_->classes();
      for (std::int64_t i = 0; i < k; ++i) {
        // Heatmap pixel -> input pixel with the (size - 1) ratios (UDP).
        const double x = double(index[i] % hw) * (w - 1) / std::max<std::int64_t>(1, hw - 1);
        const double y = double(index[i] / hw) * (h - 1) / std::max<std::int64_t>(1, hh - 1);
        const Rgb color = i < std::int64_t(classes.size()) ? classes[i].color : Rgb{255, 200, 0};
        cv::circle(canvas, cv::Point(int(x), int(y)), 2, cv::Scalar(color[0], color[1], color[2]),
                   cv::FILLED);
      }
    } else {
      // Dense tasks: the first output's three channels stretched to 0..255.
      const at::Tensor map = outputs.all().front().second.to(at::kFloat).cpu()[0];
      at::Tensor rgb = at::upsample_bilinear2d(map.slice(0, 0, 3).unsqueeze(0), {h, w}, false)[0];
      const at::Tensor lo = rgb.amin({1, 2}, true), hi = rgb.amax({1, 2}, true);
      rgb = ((rgb - lo) / (hi - lo).clamp_min(1e-6) * 255)
                .round()
                .to(at::kByte)
                .permute({1, 2, 0})
                .contiguous();
      image = QImage(rgb.data_ptr<std::uint8_t>(), w, h, w * 3, QImage::Format_RGB888).copy();
    }
    Q_EMIT preview(image, step, previewHeldOut_, beforeTraining);
  } catch (const std::exception& e) {
    logger().warn("Fine-tuning preview failed: {}", e.what());
  }
}

}  // namespace sapiens::studio
