#pragma once
// CPU threading policy. LibTorch on Debian starts with one intra-op thread on this class of machine;
// we default to all cores. libgomp reads OMP_WAIT_POLICY only when it is loaded, and its default
// (spinning) slowed a small loop ~50x under load, so executables re-exec themselves once with
// OMP_WAIT_POLICY=PASSIVE before anything else runs (see ensurePassiveOpenMpWait).

namespace sapiens::threads {

/// SAPIENS_NUM_THREADS if set and valid, else the number of cores available to this process.
int defaultCount();
/// Sets LibTorch's intra-op thread count (and inter-op once). n <= 0 selects defaultCount().
/// Returns the count in effect.
int configure(int n);
/// Current intra-op thread count.
int current();

/// Call first thing in main(). If OMP_WAIT_POLICY is unset, sets it to PASSIVE and re-executes the
/// program (same argv) so that libgomp sees it. Does nothing when SAPIENS_NO_REEXEC is set or the
/// variable is already set. Returns only if no re-exec happened.
void ensurePassiveOpenMpWait(int argc, char** argv);

}  // namespace sapiens::threads
