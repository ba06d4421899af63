#include "sapiens/motion/motion_tables.h"

#include <cmath>
#include <stdexcept>

namespace sapiens::motion {

void requireIncreasingTimes(const SampleTimes& times, const std::string& what) {
  if (times.frames.size() != times.seconds.size())
    throw std::invalid_argument(what + ": " + std::to_string(times.seconds.size()) + " times but " +
                                std::to_string(times.frames.size()) + " frame numbers");
  for (std::size_t r = 0; r < times.seconds.size(); ++r) {
    const double t = times.seconds[r];
    if (!std::isfinite(t))
      throw std::invalid_argument(what + ": row " + std::to_string(r) + " has no finite time");
    if (r > 0 && t <= times.seconds[r - 1])
      throw std::invalid_argument(what + ": row " + std::to_string(r) + " at " + std::to_string(t) +
                                  " s is not later than the row before (" +
                                  std::to_string(times.seconds[r - 1]) + " s)");
  }
}

}  // namespace sapiens::motion
