#pragma once
// Pause, resume and stop for a training loop running on another thread. Any thread may call the
// requests; the training thread polls between steps.

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace sapiens {

class TrainingControl {
 public:
  void pause();
  void resume();
  /// Also ends a pause. Training returns after the current step.
  void stop();
  /// Clears a stop, so that training may continue.
  void reset();

  bool paused() const { return paused_.load(); }
  bool stopRequested() const { return stop_.load(); }
  /// Blocks while paused; returns false when a stop was requested.
  bool waitWhilePaused() const;

 private:
  std::atomic<bool> paused_{false};
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
};

}  // namespace sapiens
