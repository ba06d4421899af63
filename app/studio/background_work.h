#pragma once
// The one way the studio does slow work (decoding, building pictures and point clouds, reading and
// writing files) without the GUI thread waiting: on a pool thread at background priority, with the
// result or the failure's message handed back to a GUI-thread object.

#include "thread_priority.h"

#include <QMetaObject>
#include <QObject>
#include <QString>
#include <QThreadPool>

#include <exception>
#include <type_traits>
#include <utility>

namespace sapiens::studio {

/// Runs `work()` on `pool`, then `done(result, error)` on `receiver`'s thread: `error` is empty on
/// success, else the message of what `work` threw (and `result` a default value). `receiver` must outlive
/// the pool's tasks (its owner waits for the pool before it goes).
template <class Work, class Done>
void runInBackground(QThreadPool& pool, QObject* receiver, Work work, Done done) {
  using Result = std::invoke_result_t<Work&>;
  static_assert(!std::is_void_v<Result>, "work returns what done receives");
  pool.start([receiver, work = std::move(work), done = std::move(done)]() mutable {
    runInBackgroundPriority();
    Result result{};
    QString error;
    try {
      result = work();
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    QMetaObject::invokeMethod(
        receiver,
        [done = std::move(done), result = std::move(result), error]() mutable {
          done(std::move(result), error);
        },
        Qt::QueuedConnection);
  });
}

}  // namespace sapiens::studio
