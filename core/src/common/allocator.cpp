#include "sapiens/common/allocator.h"

#include <malloc.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace sapiens::memory {

namespace {

long long residentBytes() {
  std::ifstream statm("/proc/self/statm");
  long long pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace

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
  // Never trimmed on free (-1): a 0.4b seg forward at 1024x768 peaks 1.2 GB above what stays allocated;
  // with a 1 GiB threshold glibc gave that back after every forward and faulted it in again in the next
  // (270-295k page faults, 11.0-11.2 s a forward; untrimmed: none, 9.6-9.8 s). releaseFreeMemory() gives
  // it back when the program goes idle.
  mallopt(M_TRIM_THRESHOLD, -1);
}

long long releaseFreeMemory() {
  const long long before = residentBytes();
  malloc_trim(0);
  const long long after = residentBytes();
  return before > 0 && after > 0 && before > after ? before - after : 0;
}

}  // namespace sapiens::memory
