#pragma once
// What the process has used so far, as the operating system counts it.

namespace sapiens {

/// The largest resident set this process has had, in MB (getrusage; 0 where unknown).
double peakResidentMegabytes();

}  // namespace sapiens
