#pragma once
// The two hand-overs between the stages of the frame pipeline. BoundedQueue: every item, in order; a
// full queue blocks the producer (back-pressure for files). LatestSlot: one item; a new one replaces an
// unread one, which is counted as dropped (live cameras: the newest frame wins). Both can be closed from
// any thread, which wakes every waiter: pop() then drains what is left and returns nullopt.

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

namespace sapiens {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  /// Waits for room; false (item not queued) when the queue was closed.
  bool push(T item) {
    std::unique_lock lock(mutex_);
    notFull_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    notEmpty_.notify_one();
    return true;
  }

  /// Waits for an item; nullopt once the queue is closed and empty.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    notEmpty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    return takeFront();
  }

  /// Waits at most `timeout` for an item; nullopt on timeout or once closed and empty.
  template <class Duration>
  std::optional<T> popFor(Duration timeout) {
    std::unique_lock lock(mutex_);
    notEmpty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    return takeFront();
  }

  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

  /// An item if one is waiting, without blocking.
  std::optional<T> tryPop() {
    std::lock_guard lock(mutex_);
    return takeFront();
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    notFull_.notify_all();
    notEmpty_.notify_all();
  }

 private:
  std::optional<T> takeFront() {
    if (items_.empty()) return std::nullopt;
    std::optional<T> item(std::move(items_.front()));
    items_.pop_front();
    notFull_.notify_one();
    return item;
  }

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable notFull_, notEmpty_;
  std::deque<T> items_;
  bool closed_ = false;
};

template <class T>
class LatestSlot {
 public:
  /// Never blocks; replaces (and counts as dropped) an item nobody took. False when closed.
  bool push(T item) {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    if (item_) ++dropped_;
    item_ = std::move(item);
    ready_.notify_one();
    return true;
  }

  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return closed_ || item_.has_value(); });
    std::optional<T> item = std::move(item_);
    item_.reset();
    return item;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    ready_.notify_all();
  }

  std::int64_t dropped() const {
    std::lock_guard lock(mutex_);
    return dropped_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::optional<T> item_;
  std::int64_t dropped_ = 0;
  bool closed_ = false;
};

}  // namespace sapiens
