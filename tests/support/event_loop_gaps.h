#pragma once
// The longest gap between turns of the GUI thread's event loop while it measures: a 10 ms timer notes
// when it fires, so a gap well above 10 ms is the time the thread spent on something else.

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

#include <algorithm>

namespace sapiens::test {

class EventLoopGaps {
 public:
  EventLoopGaps() {
    probe_.setInterval(10);
    QObject::connect(&probe_, &QTimer::timeout, [this] {
      const qint64 now = clock_.elapsed();
      if (lastTick_ >= 0) longest_ = std::max(longest_, now - lastTick_);
      lastTick_ = now;
    });
    clock_.start();
    probe_.start();
  }
  void stop() { probe_.stop(); }
  /// Milliseconds since it started.
  qint64 elapsed() const { return clock_.elapsed(); }
  qint64 longestGap() const { return longest_; }

 private:
  QElapsedTimer clock_;
  QTimer probe_;
  qint64 lastTick_ = -1;
  qint64 longest_ = 0;
};

}  // namespace sapiens::test
