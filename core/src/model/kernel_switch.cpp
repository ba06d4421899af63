#include "kernel_switch.h"

#include <cstdlib>
#include <cstring>

namespace sapiens::detail {

bool switchedOffByEnvironment(const char* name) {
  const char* value = std::getenv(name);
  return value && (std::strcmp(value, "0") == 0 || std::strcmp(value, "off") == 0);
}

}  // namespace sapiens::detail
