#pragma once
// Cephes' single-precision exp, shared by the vectorised softmax routines: range reduction by ln 2 in
// two parts, a degree-6 polynomial, 2^n through the exponent bits. Within 4e-7 relative of std::exp.

namespace sapiens::detail::exp_polynomial {

inline constexpr float kLowestInput = -87.33654f;  // below it 2^n underflows the exponent bits: 0
inline constexpr float kHighestInput = 88.8f;      // above ln(FLT_MAX) = 88.7228: +inf either way
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2High = 0.693359375f;
inline constexpr float kLn2Low = -2.12194440e-4f;
inline constexpr float kP0 = 1.9875691500e-4f;
inline constexpr float kP1 = 1.3981999507e-3f;
inline constexpr float kP2 = 8.3334519073e-3f;
inline constexpr float kP3 = 4.1665795894e-2f;
inline constexpr float kP4 = 1.6666665459e-1f;
inline constexpr float kP5 = 5.0000001201e-1f;

}  // namespace sapiens::detail::exp_polynomial
