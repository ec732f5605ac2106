// \file The fp8 conversions of core/support/float8.h against references written from the formats'
// definitions: decoding from the sign, exponent and mantissa fields; encoding by searching every
// finite code for the nearest value (ties to the even code), then saturating.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/support/float8.h"

namespace {

/// One OCP FP8 format as its definition states it.
struct Def {
  int exp_bits;
  int mant_bits;
  int bias;
  bool ieee_specials;  ///< e5m2: all-ones exponent is inf/NaN; e4m3fn: only S.1111.111 is NaN
  double max;
  uint8_t (*encode)(double);
  double (*decode)(uint8_t);
};
const Def kE4m3{4, 3, 7, false, 448.0, tessera::f8e4m3_from_double, tessera::f8e4m3_to_double};
const Def kE5m2{5, 2, 15, true, 57344.0, tessera::f8e5m2_from_double, tessera::f8e5m2_to_double};

/// The value of `code` by the definition: (-1)^S * 2^(E - bias) * (1 + M / 2^m) for normals,
/// 2^(1 - bias) * (M / 2^m) for subnormals (E = 0).
double ref_value(const Def& f, int code) {
  const int s = code >> 7;
  const int e = (code >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  const int m = code & ((1 << f.mant_bits) - 1);
  const int e_max = (1 << f.exp_bits) - 1;
  const int m_max = (1 << f.mant_bits) - 1;
  if (f.ieee_specials && e == e_max)
    return m ? std::numeric_limits<double>::quiet_NaN()
             : (s ? -1 : 1) * std::numeric_limits<double>::infinity();
  if (!f.ieee_specials && e == e_max && m == m_max) return std::numeric_limits<double>::quiet_NaN();
  const double frac = static_cast<double>(m) / (1 << f.mant_bits);
  const double mag =
      e == 0 ? std::pow(2.0, 1 - f.bias) * frac : std::pow(2.0, e - f.bias) * (1 + frac);
  return s ? -mag : mag;
}

/// The code `x` converts to by cvt.rn.satfinite: NaN stays NaN, beyond max saturates, else the
/// nearest finite code by exhaustive search, a tie going to the code with an even mantissa.
int ref_encode(const Def& f, double x) {
  if (std::isnan(x)) return -1;  // any NaN code
  const bool neg = std::signbit(x);
  if (std::fabs(x) > f.max) return (neg ? 0x80 : 0) | f.encode(f.max);
  int best = -1;
  double best_err = 0;
  for (int c = 0; c < 128; ++c) {
    const double v = ref_value(f, c);
    if (!std::isfinite(v)) continue;
    const double err = std::fabs(std::fabs(x) - v);
    if (best < 0 || err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return (neg ? 0x80 : 0) | best;
}

void check_encode(const Def& f, double x) {
  CAPTURE(x);
  const int want = ref_encode(f, x);
  const uint8_t got = f.encode(x);
  if (want < 0)
    CHECK(std::isnan(f.decode(got)));
  else
    CHECK(static_cast<int>(got) == want);
}

/// Every finite value of the format, ascending.
std::vector<double> finite_values(const Def& f) {
  std::vector<double> out;
  for (int c = 0; c < 256; ++c)
    if (std::isfinite(ref_value(f, c))) out.push_back(ref_value(f, c));
  std::sort(out.begin(), out.end());
  return out;
}

void check_format(const Def& f) {
  // Decoding: all 256 codes.
  for (int c = 0; c < 256; ++c) {
    CAPTURE(c);
    const double want = ref_value(f, c);
    const double got = f.decode(static_cast<uint8_t>(c));
    if (std::isnan(want))
      CHECK(std::isnan(got));
    else
      CHECK(got == want);
    if (std::isfinite(want)) CHECK(std::signbit(got) == std::signbit(want));
    // Every finite code round-trips (through f32 too: every value is exact there).
    if (std::isfinite(want)) CHECK(static_cast<int>(f.encode(static_cast<float>(got))) == c);
  }
  // Encoding: every value, each midpoint between neighbours (a tie), just above and below it,
  // and beyond the largest finite value.
  const std::vector<double> v = finite_values(f);
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    const double mid = (v[i] + v[i + 1]) / 2;
    check_encode(f, mid);
    check_encode(f, std::nextafter(mid, -INFINITY));
    check_encode(f, std::nextafter(mid, INFINITY));
    check_encode(f, static_cast<float>(v[i]));
  }
  for (double x : {f.max * 1.03, f.max * 1.0625, f.max * 1.2, f.max * 2, 1e30, -1e30})
    check_encode(f, x);
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> exponent(-20.0, 18.0);
  for (int i = 0; i < 20000; ++i) {
    const double x = std::ldexp(1.0 + std::ldexp(static_cast<double>(rng() >> 40), -24),
                                static_cast<int>(exponent(rng)));
    check_encode(f, static_cast<float>(i % 2 ? -x : x));
  }
}

}  // namespace

TEST_CASE("float8: e4m3 decodes all 256 codes and rounds to nearest even, saturating") {
  check_format(kE4m3);
}

TEST_CASE("float8: e5m2 decodes all 256 codes and rounds to nearest even, saturating") {
  check_format(kE5m2);
}

TEST_CASE("float8: the edge values of e4m3 (max 448, no infinities, subnormals from 2^-9)") {
  using tessera::f8e4m3_from_double;
  using tessera::f8e4m3_to_double;
  CHECK(f8e4m3_to_double(0x7E) == 448.0);
  CHECK(std::isnan(f8e4m3_to_double(0x7F)));
  CHECK(std::isnan(f8e4m3_to_double(0xFF)));
  CHECK(f8e4m3_to_double(0x78) == 256.0);  // S.1111.000 is a number in e4m3fn
  CHECK(f8e4m3_to_double(0x01) == std::ldexp(1.0, -9));
  CHECK(f8e4m3_to_double(0x08) == std::ldexp(1.0, -6));
  CHECK(f8e4m3_from_double(INFINITY) == 0x7E);  // satfinite
  CHECK(f8e4m3_from_double(-INFINITY) == 0xFE);
  CHECK(f8e4m3_from_double(464.0) == 0x7E);  // would round up to 480: saturates
  CHECK(f8e4m3_from_double(NAN) == 0x7F);
  CHECK(f8e4m3_from_double(-0.0) == 0x80);
  CHECK(f8e4m3_from_double(std::ldexp(1.0, -10)) == 0x00);   // a tie between 0 and 2^-9
  CHECK(f8e4m3_from_double(std::ldexp(3.0, -10)) == 0x02);   // a tie between 1 and 2 quanta
  CHECK(f8e4m3_from_double(1.0 + 1.0 / 16) == 0x38);         // tie to even mantissa 000
  CHECK(f8e4m3_from_double(1.0 + 3.0 / 16) == 0x3A);         // tie to even mantissa 010
  CHECK(f8e4m3_from_double(std::ldexp(15.5, -10)) == 0x08);  // rounds up into the normals
}

TEST_CASE("float8: the edge values of e5m2 (max 57344, infinities, subnormals from 2^-16)") {
  using tessera::f8e5m2_from_double;
  using tessera::f8e5m2_to_double;
  CHECK(f8e5m2_to_double(0x7B) == 57344.0);
  CHECK(f8e5m2_to_double(0x7C) == INFINITY);
  CHECK(f8e5m2_to_double(0xFC) == -INFINITY);
  CHECK(std::isnan(f8e5m2_to_double(0x7D)));
  CHECK(f8e5m2_to_double(0x01) == std::ldexp(1.0, -16));
  CHECK(f8e5m2_from_double(INFINITY) == 0x7B);  // satfinite: no infinity from a conversion
  CHECK(f8e5m2_from_double(-1e6) == 0xFB);
  CHECK(f8e5m2_from_double(61440.0) == 0x7B);
  CHECK(f8e5m2_from_double(NAN) == 0x7F);
  CHECK(f8e5m2_from_double(1.0 + 1.0 / 8) == 0x3C);  // tie to even
  CHECK(f8e5m2_from_double(1.0 + 3.0 / 8) == 0x3E);
  CHECK(f8e5m2_from_double(std::ldexp(1.0, -17)) == 0x00);
}

TEST_CASE("float8: host element types are one byte and convert like the functions") {
  static_assert(sizeof(tessera::float8_e4m3) == 1 && sizeof(tessera::float8_e5m2) == 1);
  CHECK(tessera::float8_e4m3(0.3f).bits == tessera::f8e4m3_from_double(0.3f));
  CHECK(static_cast<float>(tessera::float8_e5m2::from_bits(0x3C)) == 1.0f);
  CHECK(static_cast<double>(tessera::float8_e4m3(1000.0)) == 448.0);
}
