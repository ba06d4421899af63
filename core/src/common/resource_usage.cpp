#include "sapiens/common/resource_usage.h"

#include <sys/resource.h>

namespace sapiens {

double peakResidentMegabytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

}  // namespace sapiens
