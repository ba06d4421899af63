#include "sapiens/finetune/training_control.h"

namespace sapiens {

void TrainingControl::pause() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
}

void TrainingControl::resume() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
  }
  changed_.notify_all();
}

void TrainingControl::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    paused_ = false;
  }
  changed_.notify_all();
}

void TrainingControl::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_ = false;
}

bool TrainingControl::waitWhilePaused() const {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [this] { return !paused_.load() || stop_.load(); });
  return !stop_.load();
}

}  // namespace sapiens
