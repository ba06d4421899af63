#pragma once
// Stopping a forward pass between layers, so that nobody waits for the rest of a long one (a window
// closing while a 5b model runs on the CPU): a thread installs a flag; the backbone checks it before each
// block and throws ForwardInterrupted once it is set. Costs one atomic load per block.

#include <atomic>
#include <stdexcept>

namespace sapiens {

class ForwardInterrupted : public std::runtime_error {
 public:
  ForwardInterrupted() : std::runtime_error("the forward pass was interrupted") {}
};

/// The flag forward passes on the calling thread check from now on (nullptr: none). The flag must
/// outlive the thread's forward passes.
void setForwardInterruptFlag(const std::atomic<bool>* flag);

/// The calling thread's flag (nullptr: none): work that runs its forward passes on threads of its own
/// installs it there, so that the job's interrupt reaches them.
const std::atomic<bool>* forwardInterruptFlag();

/// Throws ForwardInterrupted when the calling thread's flag is set.
void throwIfForwardInterrupted();

}  // namespace sapiens
