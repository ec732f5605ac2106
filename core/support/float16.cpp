/// \file Narrow-float rounding by scaling to an integer significand and rounding once.
#include "core/support/float16.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tessera {
namespace {

/// A binary float format with `mant` stored mantissa bits and exponent range [emin, emax].
struct Format {
  int mant;
  int emin;
  int emax;
  int bias;
};
constexpr Format kHalf{10, -14, 15, 15};
constexpr Format kBfloat{7, -126, 127, 127};

uint16_t encode(const Format& f, double x) {
  const uint16_t exp_all_ones = static_cast<uint16_t>(((1 << (15 - f.mant)) - 1) << f.mant);
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  if (std::isnan(x)) return sign | exp_all_ones | static_cast<uint16_t>(1 << (f.mant - 1));
  double a = std::fabs(x);
  if (std::isinf(a)) return sign | exp_all_ones;
  if (a == 0.0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e with m in [0.5, 1)
  int exponent = e - 1;
  if (exponent < f.emin) {
    // Subnormal: the quantum is 2^(emin - mant); a significand reaching 2^mant becomes the
    // smallest normal, which the bit pattern k already encodes.
    double k = std::nearbyint(std::ldexp(a, f.mant - f.emin));
    return sign | static_cast<uint16_t>(k);
  }
  double k = std::nearbyint(std::ldexp(a, f.mant - exponent));  // in [2^mant, 2^(mant+1)]
  if (k >= std::ldexp(1.0, f.mant + 1)) {
    k /= 2;
    exponent += 1;
  }
  if (exponent > f.emax) return sign | exp_all_ones;
  uint32_t bits = (static_cast<uint32_t>(exponent + f.bias) << f.mant) |
                  (static_cast<uint32_t>(k) - (1u << f.mant));
  return sign | static_cast<uint16_t>(bits);
}

double decode(const Format& f, uint16_t bits) {
  const int exp_bits = 15 - f.mant;
  const uint32_t mant_mask = (1u << f.mant) - 1;
  const bool negative = bits & 0x8000;
  const uint32_t exponent = (bits >> f.mant) & ((1u << exp_bits) - 1);
  const uint32_t mantissa = bits & mant_mask;
  double value;
  if (exponent == (1u << exp_bits) - 1) {
    value = mantissa ? std::numeric_limits<double>::quiet_NaN()
                     : std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    value = std::ldexp(static_cast<double>(mantissa), f.emin - f.mant);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | (1u << f.mant)),
                       static_cast<int>(exponent) - f.bias - f.mant);
  }
  return negative ? -value : value;
}

}  // namespace

uint16_t f16_from_double(double x) {
  return encode(kHalf, x);
}
double f16_to_double(uint16_t bits) {
  return decode(kHalf, bits);
}
uint16_t bf16_from_double(double x) {
  return encode(kBfloat, x);
}
double bf16_to_double(uint16_t bits) {
  return decode(kBfloat, bits);
}

float round_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1FFFu;  // 13 dropped bits; adding half an ulp rounds ties away
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

}  // namespace tessera
