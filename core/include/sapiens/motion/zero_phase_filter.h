#pragma once
// Forward-backward (zero-phase) IIR filtering as scipy.signal.filtfilt(b, a, x) does it with its defaults:
// odd extension by padlen = 3 * max(len(a), len(b)) samples at each end, each pass started from
// lfilter_zi's steady state scaled by the first sample, the padding cut off again.

#include "sapiens/motion/butterworth.h"

#include <cstddef>
#include <vector>

namespace sapiens::motion {

/// scipy's default padlen for `filter`: 3 * max(len(a), len(b)).
std::size_t filtfiltPadLength(const IirCoefficients& filter);

/// The fewest samples filtfilt accepts: one more than the padding.
std::size_t filtfiltMinimumLength(const IirCoefficients& filter);

/// scipy.signal.lfilter_zi: the direct-form-II-transposed state of a step response's steady state.
std::vector<double> lfilterSteadyState(const IirCoefficients& filter);

/// scipy.signal.lfilter with initial state `state` (updated to the final state).
std::vector<double> lfilter(const IirCoefficients& filter, const std::vector<double>& x,
                            std::vector<double>& state);

/// scipy.signal.filtfilt(b, a, x) with padtype 'odd' and the default padlen. Throws MotionError when `x`
/// has no more samples than the padding, or holds a value that is not finite.
std::vector<double> filtfilt(const IirCoefficients& filter, const std::vector<double>& x);

}  // namespace sapiens::motion
