#pragma once
// Fine-tuning for the studio, on its own thread (FineTunePanel owns the thread): loads the checkpoint,
// prepares the label set's features and trains a core FineTuner, reporting through signals (queued to
// the GUI thread). pause(), resume(), stop() and requestSave() may be called from any thread; nothing
// here makes the GUI thread wait for a training step.
//
// Pausing happens in the worker's own progress callback (between two steps, or between two feature
// computations while preparing): while paused it still runs queued saves, so "pause, save, resume"
// works without ending the run.

#include "sapiens/finetune/feature_cache.h"
#include "sapiens/finetune/fine_tuner.h"
#include "sapiens/finetune/training_control.h"
#include "sapiens/finetune/training_settings.h"
#include "sapiens/model/task.h"

#include <opencv2/core/mat.hpp>

#include <QImage>
#include <QObject>
#include <QString>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>

namespace sapiens::studio {

struct FineTuneJob {
  QString labelSetFolder;
  QString modelPath;
  TrainingSettings settings;
};

class FineTuneWorker : public QObject {
  Q_OBJECT

 public:
  FineTuneWorker();
  ~FineTuneWorker() override;

  /// Worker thread: loads the model and the label set, prepares and trains; a new FineTuner each time
  /// (the feature cache is kept, so unchanged frames skip the backbone). Ends with finished or failed.
  void train(const FineTuneJob& job);
  /// Worker thread: trains the last run's FineTuner further after a stop (to its step count).
  void continueTraining();
  /// Worker thread: drops the FineTuner (e.g. when the label set changes).
  void discard();

  // Any thread.
  /// Clears an earlier stop and pause: call before queueing train() or continueTraining() (a stop
  /// requested after that, even before the run begins, is kept).
  void rearm();
  void pause();
  void resume();
  void stop();
  /// Quitting: stop, and also in the middle of a backbone pass (between its layers).
  void abandon();
  bool isPaused() const { return pauseRequested_.load(); }
  /// Saves the trained model (full or head alone) as soon as the worker is between steps, or now if it
  /// is idle; saved follows.
  void requestSave(const QString& path, bool fullModel);

 Q_SIGNALS:
  /// Status text ("loading the model", "computing features 3/8").
  void status(const QString& text);
  void preparing(qulonglong done, qulonglong total);
  /// Training started (after preparation): the metric's name, whether higher is better, the step count.
  void trainingStarted(const QString& metricName, bool higherIsBetter, int totalSteps, int startStep);
  /// One progress report (every step). `evaluated` when evalLoss/evalMetric hold a new evaluation (of the
  /// validation frames, else of the training frames: `evalOnValidation` says which).
  void progress(int step, int totalSteps, double trainLoss, double learningRate, double stepsPerSecond,
                double secondsLeft, bool evaluated, double evalLoss, double evalMetric, bool evalOnValidation,
                const QString& snapshot);
  /// The peak learning rate of the run, once prepared: `trials` describes the range test that chose it
  /// ("3e-04: loss 8.2116, ..."), empty when the rate was given.
  void learningRateChosen(double rate, const QString& trials);
  /// The head's prediction on the preview frame (the first held-out frame, else the first training frame:
  /// `heldOut` says which), as a picture; `beforeTraining` for the one right after preparing, before the
  /// first step.
  void preview(const QImage& image, int step, bool heldOut, bool beforeTraining);
  void pausedAt(int step);
  void resumed();
  /// A run ended (completed or stopped); the summary says the metric before and after.
  void finished(bool stopped, int steps, const QString& summary);
  /// Loading, preparing or training failed; `reason` names the file where there is one.
  void failed(const QString& reason);
  /// Step `step` made the loss, the gradients or the head NaN or infinite: training stopped, and the
  /// head is the one after `keptStep` steps (it can be saved or trained further at a lower rate).
  void diverged(int step, int keptStep, const QString& message);
  /// A save finished; `error` is empty on success.
  void saved(const QString& path, const QString& error);

 private:
  void runTraining(bool fresh);
  /// Runs queued saves and blocks while paused. Returns false when stopped.
  bool betweenSteps(int step);
  void runPendingSaves();
  void emitPreview(int step, bool beforeTraining = false);

  std::shared_ptr<FeatureCache> cache_;
  std::unique_ptr<FineTuner> tuner_;
  std::optional<std::size_t> previewSample_;
  cv::Mat previewPicture_;  ///< the preview sample's network input, BGR
  bool previewHeldOut_ = false;

  TrainingControl control_;  // stop, as FineTuner sees it
  std::atomic<bool> pauseRequested_{false};
  std::atomic<bool> stopRequested_{false};
  std::atomic<bool> abandoned_{false};  // the worker thread's forward interrupt
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::pair<QString, bool>> saves_;
};

}  // namespace sapiens::studio
