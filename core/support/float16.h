/// \file Exact conversions between double and the narrow float formats (fp16, bf16, tf32).
/// The host interpreter is the definition of Tessera's numerics, so every rounding here is exact
/// round-to-nearest-even from the double value (no double rounding through f32).
#pragma once

#include <cstdint>

namespace tessera {

/// Rounds `x` to IEEE binary16 (round to nearest, ties to even); returns the bits.
uint16_t f16_from_double(double x);
/// The value of the IEEE binary16 number with bits `bits` (exact).
double f16_to_double(uint16_t bits);

/// Rounds `x` to bfloat16 (round to nearest, ties to even); returns the bits.
uint16_t bf16_from_double(double x);
/// The value of the bfloat16 number with bits `bits` (exact).
double bf16_to_double(uint16_t bits);

/// Rounds a float to TF32 the way the tensor cores' `cvt.rna.tf32.f32` does: to nearest with
/// ties away from zero, keeping 10 mantissa bits; the result is still an f32 value.
float round_to_tf32(float x);

/// Host-side fp16 element type for buffers (`Buffer<half>`); converts exactly from float.
struct half {
  uint16_t bits = 0;  ///< the binary16 encoding
  half() = default;   ///< +0
  /// `x` rounded to binary16 (to nearest, ties to even).
  explicit half(float x) : bits(f16_from_double(x)) {}
  /// `x` rounded to binary16 (to nearest, ties to even, without double rounding).
  explicit half(double x) : bits(f16_from_double(x)) {}
  /// The value whose binary16 encoding is `b`.
  static half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
  /// The value as a float (exact).
  explicit operator float() const { return static_cast<float>(f16_to_double(bits)); }
  /// The value as a double (exact).
  explicit operator double() const { return f16_to_double(bits); }
};

/// Host-side bf16 element type for buffers (`Buffer<bfloat16>`).
struct bfloat16 {
  uint16_t bits = 0;     ///< the bfloat16 encoding
  bfloat16() = default;  ///< +0
  /// `x` rounded to bfloat16 (to nearest, ties to even).
  explicit bfloat16(float x) : bits(bf16_from_double(x)) {}
  /// `x` rounded to bfloat16 (to nearest, ties to even, without double rounding).
  explicit bfloat16(double x) : bits(bf16_from_double(x)) {}
  /// The value whose bfloat16 encoding is `b`.
  static bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  /// The value as a float (exact).
  explicit operator float() const { return static_cast<float>(bf16_to_double(bits)); }
  /// The value as a double (exact).
  explicit operator double() const { return bf16_to_double(bits); }
};

}  // namespace tessera
