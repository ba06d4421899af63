#pragma once
// One thread that runs jobs in the order they were posted: reads and writes of the same files (a label
// frame's mask, its picture) stay in order without the GUI thread waiting for them. The destructor runs
// what is queued (so no write is lost) and joins.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace sapiens::studio {

class SerialWorker {
 public:
  SerialWorker();
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  /// Runs `job` after every job posted before it. A job's exceptions are its own to catch.
  void post(std::function<void()> job);
  /// Waits until every job posted so far has run (for a write that must be on disk now: quitting).
  void drain();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> jobs_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace sapiens::studio
