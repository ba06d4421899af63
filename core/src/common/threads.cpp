#include "sapiens/common/threads.h"

#include "sapiens/common/blas_kernels.h"
#include "sapiens/common/cpu_features.h"

#include "sapiens/common/log.h"

#include <ATen/Parallel.h>

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace sapiens::threads {

int defaultCount() {
  if (const char* env = std::getenv("SAPIENS_NUM_THREADS"); env && *env) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end && *end == '\0' && n > 0 && n <= 1024) return static_cast<int>(n);
    logger().warn("ignoring SAPIENS_NUM_THREADS='{}': not a thread count between 1 and 1024", env);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

int configure(int n) {
  if (n <= 0) n = defaultCount();
  at::set_num_threads(n);
  // The inter-op pool can be sized once per process only, before it is first used.
  static std::once_flag interOpOnce;
  std::call_once(interOpOnce, [] {
    try {
      at::set_num_interop_threads(1);
    } catch (const std::exception&) {
    }
  });
  logger().debug("intra-op threads: {}", at::get_num_threads());
  return at::get_num_threads();
}

int current() {
  return at::get_num_threads();
}

void ensureThreadPoolWaitPolicy(int argc, char** argv) {
  (void)argc;
  if (std::getenv("SAPIENS_NO_REEXEC")) return;
  bool changed = false;
  // OpenBLAS's idle spin lasts 2^N cycles; 4 (its minimum) puts its threads to sleep almost at once.
  for (const auto& [name, value] :
       {std::pair{"OMP_WAIT_POLICY", "PASSIVE"}, {"OPENBLAS_THREAD_TIMEOUT", "4"}}) {
    if (std::getenv(name)) continue;
    setenv(name, value, 1);
    changed = true;
  }
  // OpenBLAS reads OPENBLAS_CORETYPE at load too: where it fell back to kernels older than the CPU runs,
  // the restarted process gets the right ones.
  const std::string pin = blas::coreTypeToPin(blas::openBlasCore(), cpu::hasAvx2Fma(), cpu::hasAvx512());
  if (!pin.empty() && !std::getenv("OPENBLAS_CORETYPE")) {
    setenv("OPENBLAS_CORETYPE", pin.c_str(), 1);
    changed = true;
  }
  if (!changed) return;
  // A second guard against loops, should the variables be scrubbed by something in between.
  setenv("SAPIENS_NO_REEXEC", "1", 1);
  execv("/proc/self/exe", argv);
  // exec failed (e.g. /proc not mounted): carry on with the default policies.
}

int thisThreadNiceness() {
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  return errno == 0 ? current : 0;
}

bool lowerThisThreadPriority(int niceness) {
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  if (thisThreadNiceness() >= niceness) return true;
  if (setpriority(PRIO_PROCESS, tid, niceness) == 0) return true;
  logger().warn("cannot lower the priority of a background thread: {}", std::strerror(errno));
  return false;
}

}  // namespace sapiens::threads
