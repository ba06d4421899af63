#include "sapiens/model/forward_interrupt.h"

namespace sapiens {
namespace {
thread_local const std::atomic<bool>* interruptFlag = nullptr;
}  // namespace

void setForwardInterruptFlag(const std::atomic<bool>* flag) {
  interruptFlag = flag;
}

const std::atomic<bool>* forwardInterruptFlag() {
  return interruptFlag;
}

void throwIfForwardInterrupted() {
  if (interruptFlag && interruptFlag->load(std::memory_order_relaxed)) throw ForwardInterrupted();
}

}  // namespace sapiens
