#pragma once
// Where a fine-tuning run is, as the fine-tuning panel and its training tab show it.

namespace sapiens::studio {

enum class TrainingState { Idle, Preparing, Training, Paused, Stopping, Stopped, Finished, Failed };

/// Preparing, Training, Paused or Stopping: the worker is busy with a run.
constexpr bool isRunning(TrainingState state) {
  return state == TrainingState::Preparing || state == TrainingState::Training ||
         state == TrainingState::Paused || state == TrainingState::Stopping;
}

}  // namespace sapiens::studio
