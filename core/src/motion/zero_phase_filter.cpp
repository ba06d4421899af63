#include "sapiens/motion/zero_phase_filter.h"

#include "sapiens/motion/motion_error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace sapiens::motion {

namespace {

// Solves m * x = rhs by Gaussian elimination with partial pivoting (m is small: the filter's order).
std::vector<double> solve(std::vector<std::vector<double>> m, std::vector<double> rhs) {
  const std::size_t n = rhs.size();
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t row = col + 1; row < n; ++row)
      if (std::abs(m[row][col]) > std::abs(m[pivot][col])) pivot = row;
    std::swap(m[col], m[pivot]);
    std::swap(rhs[col], rhs[pivot]);
    for (std::size_t row = col + 1; row < n; ++row) {
      const double factor = m[row][col] / m[col][col];
      for (std::size_t k = col; k < n; ++k) m[row][k] -= factor * m[col][k];
      rhs[row] -= factor * rhs[col];
    }
  }
  std::vector<double> x(n);
  for (std::size_t i = n; i-- > 0;) {
    double sum = rhs[i];
    for (std::size_t k = i + 1; k < n; ++k) sum -= m[i][k] * x[k];
    x[i] = sum / m[i][i];
  }
  return x;
}

// b and a padded with zeros to the same length, normalised by a[0].
IirCoefficients normalised(const IirCoefficients& filter) {
  IirCoefficients out = filter;
  const std::size_t n = std::max(out.a.size(), out.b.size());
  out.a.resize(n, 0.0);
  out.b.resize(n, 0.0);
  const double a0 = out.a[0];
  for (double& v : out.a) v /= a0;
  for (double& v : out.b) v /= a0;
  return out;
}

}  // namespace

std::size_t filtfiltPadLength(const IirCoefficients& filter) {
  return 3 * std::max(filter.a.size(), filter.b.size());
}

std::size_t filtfiltMinimumLength(const IirCoefficients& filter) {
  return filtfiltPadLength(filter) + 1;
}

std::vector<double> lfilterSteadyState(const IirCoefficients& filter) {
  const IirCoefficients f = normalised(filter);
  const std::size_t n = f.a.size() - 1;
  // (I - companion(a).T) zi = b[1:] - a[1:] * b[0]
  std::vector<std::vector<double>> m(n, std::vector<double>(n, 0.0));
  std::vector<double> rhs(n);
  for (std::size_t i = 0; i < n; ++i) {
    m[i][i] = 1.0;
    m[i][0] += f.a[i + 1];
    if (i + 1 < n) m[i][i + 1] -= 1.0;
    rhs[i] = f.b[i + 1] - f.a[i + 1] * f.b[0];
  }
  return solve(m, rhs);
}

std::vector<double> lfilter(const IirCoefficients& filter, const std::vector<double>& x,
                            std::vector<double>& state) {
  const IirCoefficients f = normalised(filter);
  const std::size_t n = f.a.size() - 1;
  state.resize(n, 0.0);
  std::vector<double> y(x.size());
  for (std::size_t t = 0; t < x.size(); ++t) {
    const double out = f.b[0] * x[t] + (n > 0 ? state[0] : 0.0);
    for (std::size_t i = 0; i + 1 < n; ++i) state[i] = f.b[i + 1] * x[t] + state[i + 1] - f.a[i + 1] * out;
    if (n > 0) state[n - 1] = f.b[n] * x[t] - f.a[n] * out;
    y[t] = out;
  }
  return y;
}

std::vector<double> filtfilt(const IirCoefficients& filter, const std::vector<double>& x) {
  const std::size_t pad = filtfiltPadLength(filter);
  if (x.size() <= pad)
    throw MotionError("the zero-phase filter needs more than " + std::to_string(pad) + " samples, got " +
                      std::to_string(x.size()));
  if (!std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); }))
    throw MotionError("the zero-phase filter was given a value that is not finite");
  // Odd extension: 2 * x[0] - x[pad..1] before, 2 * x[-1] - x[-2..-pad-1] after.
  std::vector<double> extended;
  extended.reserve(x.size() + 2 * pad);
  for (std::size_t i = pad; i >= 1; --i) extended.push_back(2.0 * x.front() - x[i]);
  extended.insert(extended.end(), x.begin(), x.end());
  for (std::size_t i = 2; i <= pad + 1; ++i) extended.push_back(2.0 * x.back() - x[x.size() - i]);

  const std::vector<double> zi = lfilterSteadyState(filter);
  std::vector<double> state = zi;
  for (double& s : state) s *= extended.front();
  std::vector<double> forward = lfilter(filter, extended, state);
  std::reverse(forward.begin(), forward.end());
  state = zi;
  for (double& s : state) s *= forward.front();
  std::vector<double> backward = lfilter(filter, forward, state);
  std::reverse(backward.begin(), backward.end());
  return std::vector<double>(backward.begin() + static_cast<std::ptrdiff_t>(pad),
                             backward.end() - static_cast<std::ptrdiff_t>(pad));
}

}  // namespace sapiens::motion
