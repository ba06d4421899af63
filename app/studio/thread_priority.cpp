#include "thread_priority.h"

#include "sapiens/common/log.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace sapiens::studio {
namespace {

// Only matters when the CPU is contended. Weight 335 against the GUI thread's 1024 (nice 0).
constexpr int kBackgroundNiceness = 5;

}  // namespace

void runInBackgroundPriority() {
#ifdef __linux__
  // Linux keeps a nice value per thread (the "process" of setpriority is a thread id here).
  thread_local bool done = false;
  if (done) return;
  done = true;
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, tid);
  if (errno != 0 || current >= kBackgroundNiceness) return;
  if (setpriority(PRIO_PROCESS, tid, kBackgroundNiceness) != 0)
    logger().warn("cannot lower the priority of a background thread: {}", std::strerror(errno));
#endif
}

}  // namespace sapiens::studio
