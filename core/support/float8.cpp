/// \file FP8 encoding by scaling to an integer significand and rounding once, then saturating.
#include "core/support/float8.h"

#include <cmath>
#include <limits>

namespace tessera {
namespace {

/// An 8-bit float format: `mant` stored mantissa bits, `bias`, the smallest normal exponent
/// `emin`, the code of the largest finite magnitude, the NaN code this encoder produces, and
/// whether the code after the largest finite is an infinity (IEEE-like, e5m2) or a NaN (e4m3).
struct Format8 {
  int mant;
  int bias;
  int emin;
  uint8_t max_code;
  uint8_t nan_code;
  bool has_infinity;
};
constexpr Format8 kE4m3{3, 7, -6, 0x7E, 0x7F, false};
constexpr Format8 kE5m2{2, 15, -14, 0x7B, 0x7F, true};

double max_finite(const Format8& f) {
  const int exponent = (f.max_code >> f.mant) - f.bias;
  const int significand = (1 << f.mant) | (f.max_code & ((1 << f.mant) - 1));
  return std::ldexp(significand, exponent - f.mant);
}

uint8_t encode(const Format8& f, double x) {
  if (std::isnan(x)) return f.nan_code;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double a = std::fabs(x);
  if (a >= max_finite(f)) return sign | f.max_code;  // satfinite: infinities too
  if (a == 0.0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1)
  int exponent = e - 1;
  if (exponent < f.emin) {
    // Subnormal: the quantum is 2^(emin - mant); a significand reaching 2^mant is the smallest
    // normal, which the bit pattern k already encodes.
    const double k = std::nearbyint(std::ldexp(a, f.mant - f.emin));
    return sign | static_cast<uint8_t>(k);
  }
  double k = std::nearbyint(std::ldexp(a, f.mant - exponent));  // in [2^mant, 2^(mant+1)]
  if (k >= std::ldexp(1.0, f.mant + 1)) {
    k /= 2;
    exponent += 1;
  }
  const int code = ((exponent + f.bias) << f.mant) | (static_cast<int>(k) - (1 << f.mant));
  return sign | static_cast<uint8_t>(code > f.max_code ? f.max_code : code);
}

/// The exact value of code `bits`: magnitudes above max_code are the infinity (where the format
/// has one) and NaNs.
double decode(const Format8& f, uint8_t bits) {
  const double sign = bits & 0x80 ? -1.0 : 1.0;
  const int magnitude = bits & 0x7F;
  const int mantissa = bits & ((1 << f.mant) - 1);
  if (magnitude > f.max_code) {
    if (f.has_infinity && magnitude == f.max_code + 1)
      return sign * std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  const int exponent = magnitude >> f.mant;
  if (exponent == 0) return sign * std::ldexp(mantissa, f.emin - f.mant);  // subnormal
  return sign * std::ldexp((1 << f.mant) + mantissa, exponent - f.bias - f.mant);
}

}  // namespace

uint8_t f8e4m3_from_double(double x) {
  return encode(kE4m3, x);
}

double f8e4m3_to_double(uint8_t bits) {
  return decode(kE4m3, bits);
}

uint8_t f8e5m2_from_double(double x) {
  return encode(kE5m2, x);
}

double f8e5m2_to_double(uint8_t bits) {
  return decode(kE5m2, bits);
}

}  // namespace tessera
