#include "sapiens/motion/butterworth.h"

#include "sapiens/motion/motion_error.h"

#include <cmath>
#include <complex>
#include <sstream>

namespace sapiens::motion {

namespace {

using Complex = std::complex<double>;

// Coefficients of prod(x - root), highest power first (numpy.poly).
std::vector<Complex> polynomialFromRoots(const std::vector<Complex>& roots) {
  std::vector<Complex> coefficients{1.0};
  for (const Complex& root : roots) {
    coefficients.push_back(0.0);
    for (std::size_t i = coefficients.size() - 1; i > 0; --i) coefficients[i] -= root * coefficients[i - 1];
  }
  return coefficients;
}

std::vector<double> realParts(const std::vector<Complex>& values) {
  std::vector<double> real;
  for (const Complex& v : values) real.push_back(v.real());
  return real;
}

}  // namespace

IirCoefficients butterworthLowPass(int order, double cutoffHz, double sampleRateHz) {
  const double nyquist = sampleRateHz / 2.0;
  if (order < 1) throw MotionError("Butterworth order " + std::to_string(order) + " is below 1");
  if (!(cutoffHz > 0.0) || !(cutoffHz < nyquist)) {
    std::ostringstream message;
    message << "cutoff " << cutoffHz << " Hz must be above 0 and below the Nyquist frequency " << nyquist
            << " Hz of a " << sampleRateHz << " fps clip (half its frame rate)";
    throw MotionError(message.str());
  }
  const double pi = std::acos(-1.0);
  // scipy designs at fs = 2 with Wn = cutoff / nyquist, prewarping Wn to the analogue frequency.
  const double wn = cutoffHz / nyquist;
  const double fs = 2.0;
  const double warped = 2.0 * fs * std::tan(pi * wn / fs);

  // Analogue prototype (buttap): poles on the left unit half circle, no zeros, gain 1; scaled to `warped`.
  std::vector<Complex> poles;
  for (int m = -order + 1; m < order; m += 2)
    poles.push_back(-std::exp(Complex(0.0, pi * m / (2.0 * order))) * warped);
  const double analogueGain = std::pow(warped, order);

  // Bilinear transform: every analogue pole to (2fs + p) / (2fs - p), the zeros at infinity to z = -1.
  const double fs2 = 2.0 * fs;
  std::vector<Complex> digitalPoles;
  Complex denominator = 1.0;
  for (const Complex& p : poles) {
    digitalPoles.push_back((fs2 + p) / (fs2 - p));
    denominator *= fs2 - p;
  }
  const double gain = analogueGain * (Complex(1.0) / denominator).real();
  const std::vector<Complex> digitalZeros(static_cast<std::size_t>(order), Complex(-1.0));

  IirCoefficients filter;
  filter.b = realParts(polynomialFromRoots(digitalZeros));
  for (double& coefficient : filter.b) coefficient *= gain;
  filter.a = realParts(polynomialFromRoots(digitalPoles));
  return filter;
}

}  // namespace sapiens::motion
