#pragma once
// The signals that ask a long command to stop cleanly: SIGINT (Ctrl+C) and SIGTERM (what kill, systemd,
// Slurm and Kubernetes send). Both finish or drop the work in flight and write what was done.

#include <csignal>

namespace sapiens::cli {

inline void onStopSignals(void (*handler)(int)) {
  std::signal(SIGINT, handler);
  std::signal(SIGTERM, handler);
}

}  // namespace sapiens::cli
