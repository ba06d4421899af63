#pragma once
// CPU threading policy. LibTorch on Debian starts with one intra-op thread on this class of machine;
// we default to all cores. Two thread pools share those cores: libgomp's (LibTorch's element-wise ops)
// and OpenBLAS's (matrix products). Each spins after its work by default and steals the cores from the
// other: libgomp's spinning slowed a small loop ~50x under load, OpenBLAS's sched_yield loop cost ~8% of
// a forward pass. Both libraries read their policy only when they are loaded, so executables re-exec
// themselves once with the variables set (see ensureThreadPoolWaitPolicy).

namespace sapiens::threads {

/// SAPIENS_NUM_THREADS if set and valid, else the number of cores available to this process.
int defaultCount();
/// Sets LibTorch's intra-op thread count (and inter-op once). n <= 0 selects defaultCount().
/// Returns the count in effect.
int configure(int n);
/// Current intra-op thread count.
int current();

/// Call first thing in main(). Sets OMP_WAIT_POLICY=PASSIVE and OPENBLAS_THREAD_TIMEOUT=4 where unset
/// and, if it set either, re-executes the program (same argv) so that the libraries see them. Does
/// nothing when SAPIENS_NO_REEXEC is set. Returns only if no re-exec happened.
void ensureThreadPoolWaitPolicy(int argc, char** argv);

/// Lowers the calling thread's scheduling priority to at least nice `niceness` (Linux keeps a nice value
/// per thread; threads it starts afterwards inherit it). Never raises it. Returns false when the system
/// refused (logged); a no-op returning true elsewhere.
bool lowerThisThreadPriority(int niceness);

/// How much nicer than the analysing thread the helper threads of a pipeline (decoding, reading,
/// encoding, writing) run. They need a few percent of the CPU; at the analyser's priority their wake-ups
/// preempt one of the model's lock-step threads and stall the whole parallel region (measured on 2
/// cores, docs/PERFORMANCE.md "Video pipeline"); below it they run in its gaps.
inline constexpr int kHelperNicenessStep = 5;

/// The calling thread's nice value (0 where unknown).
int thisThreadNiceness();

}  // namespace sapiens::threads
