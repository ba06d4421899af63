#include "sapiens/common/allocator.h"

#include <malloc.h>

#include <cstdlib>

namespace sapiens::memory {

void keepLargeBlocksInHeap() {
  static bool done = false;
  if (done) return;
  done = true;
  if (const char* opt = std::getenv("SAPIENS_DEFAULT_MALLOC"); opt && *opt == '1') return;
  // One arena: blocks freed by one thread (a GUI's inference worker, a pipeline stage) are reused by
  // the next allocation wherever it happens; per-thread arenas cannot hold blocks beyond 64 MiB and
  // send them back to mmap.
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

}  // namespace sapiens::memory
