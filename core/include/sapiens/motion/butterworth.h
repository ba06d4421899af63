#pragma once
// Digital Butterworth low-pass design, coefficient for coefficient what scipy.signal.butter(order,
// cutoff / (fs / 2)) returns: the analogue prototype's poles, the cutoff prewarped, the bilinear transform.

#include <vector>

namespace sapiens::motion {

/// Transfer function b(z) / a(z) of an IIR filter, a[0] == 1.
struct IirCoefficients {
  std::vector<double> b;
  std::vector<double> a;
};

/// Order `order` low-pass with its -3 dB point at `cutoffHz` for samples at `sampleRateHz`. Throws
/// MotionError naming both when the cutoff is not between 0 and the Nyquist frequency (sampleRateHz / 2)
/// or the order is below 1.
IirCoefficients butterworthLowPass(int order, double cutoffHz, double sampleRateHz);

}  // namespace sapiens::motion
