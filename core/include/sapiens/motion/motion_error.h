#pragma once
// The error of motion analysis: input or settings it cannot work with (a track too short to filter, a
// cutoff at or above the clip's Nyquist frequency, an unknown angle name, a malformed angle table). The
// message says what was wrong and with which values.

#include <stdexcept>
#include <string>

namespace sapiens::motion {

class MotionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace sapiens::motion
