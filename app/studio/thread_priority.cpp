#include "thread_priority.h"

#include "sapiens/common/threads.h"

namespace sapiens::studio {
namespace {

// Only matters when the CPU is contended. Weight 335 against the GUI thread's 1024 (nice 0).
constexpr int kBackgroundNiceness = 5;

}  // namespace

void runInBackgroundPriority() {
  thread_local bool done = false;
  if (done) return;
  done = true;
  threads::lowerThisThreadPriority(kBackgroundNiceness);
}

}  // namespace sapiens::studio
