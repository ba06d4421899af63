#pragma once
// glibc serves every allocation above its mmap threshold (at most 32 MiB) with a fresh mmap and returns
// it on free, so each large activation tensor pays its page faults again: a 0.1b forward at 1024x768
// took 159 s that way and 31-38 s with large blocks kept in the heap, at the same peak memory.

namespace sapiens::memory {

/// Serve large blocks from one heap and keep freed memory for reuse (M_ARENA_MAX = 1, M_MMAP_MAX = 0, no
/// automatic trimming). Front ends call it first thing in main(); loading or creating a Model calls it
/// too, so every program that runs a model gets it. SAPIENS_DEFAULT_MALLOC=1 keeps glibc's defaults.
void keepLargeBlocksInHeap();

/// Gives the heap's free memory back to the system (malloc_trim). The heap holds what the largest pass
/// needed until this is called: long-lived programs call it when they go idle. Returns the bytes by
/// which the resident set shrank (0 where unknown).
long long releaseFreeMemory();

}  // namespace sapiens::memory
