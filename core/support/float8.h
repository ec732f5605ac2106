/// \file The two OCP FP8 formats (e4m3fn and e5m2): exact decoding, and encoding with one
/// round-to-nearest-even and saturation, the way PTX's `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`
/// converts. The host interpreter, the SIMT interpreter and host buffers share these.
///
///   e4m3 (`f8e4m3`, Triton's float8e4nv): bias 7, no infinities, one NaN pattern per sign
///        (S.1111.111), largest finite 448, smallest subnormal 2^-9.
///   e5m2 (`f8e5m2`, Triton's float8e5): bias 15, IEEE-like (infinities at S.11111.00, NaNs
///        above), largest finite 57344, smallest subnormal 2^-16.
#pragma once

#include <cstdint>

namespace tessera {

/// Rounds `x` to e4m3 (to nearest, ties to even) and saturates: a magnitude beyond 448 (infinity
/// included) gives +-448; NaN gives the NaN 0x7F. Returns the bits.
uint8_t f8e4m3_from_double(double x);
/// The value of the e4m3 number with bits `bits` (exact; 0x7F and 0xFF are NaN).
double f8e4m3_to_double(uint8_t bits);

/// Rounds `x` to e5m2 (to nearest, ties to even) and saturates: a magnitude beyond 57344
/// (infinity included) gives +-57344; NaN gives the NaN 0x7F. Returns the bits.
uint8_t f8e5m2_from_double(double x);
/// The value of the e5m2 number with bits `bits` (exact; infinities and NaNs decode as such).
double f8e5m2_to_double(uint8_t bits);

/// Host-side element type of an 8-bit float format for buffers (`Buffer<float8_e4m3>`): one
/// byte, the encoding. `Encode` rounds a double to the format (to nearest, ties to even,
/// saturating), `Decode` gives a code's exact value; each format is one instantiation below.
template <uint8_t (*Encode)(double), double (*Decode)(uint8_t)>
struct Float8 {
  uint8_t bits = 0;    ///< the encoding
  Float8() = default;  ///< +0
  /// `x` rounded to the format (to nearest, ties to even, saturating to its largest finite).
  explicit Float8(float x) : bits(Encode(x)) {}
  /// `x` rounded to the format (to nearest, ties to even, saturating to its largest finite).
  explicit Float8(double x) : bits(Encode(x)) {}
  /// The value whose encoding is `b`.
  static Float8 from_bits(uint8_t b) {
    Float8 v;
    v.bits = b;
    return v;
  }
  /// The value as a float (exact).
  explicit operator float() const { return static_cast<float>(Decode(bits)); }
  /// The value as a double (exact).
  explicit operator double() const { return Decode(bits); }
};

/// Host-side e4m3 element type: conversions saturate to +-448.
using float8_e4m3 = Float8<f8e4m3_from_double, f8e4m3_to_double>;
/// Host-side e5m2 element type: conversions saturate to +-57344.
using float8_e5m2 = Float8<f8e5m2_from_double, f8e5m2_to_double>;

}  // namespace tessera
