/// \file Exact conversions between double and the narrow float formats (fp16, bf16, tf32).
/// The host interpreter is the definition of Tessera's numerics, so every rounding here is exact
/// round-to-nearest-even from the double value (no double rounding through f32).
#pragma once

#include <cstdint>

namespace tessera {

/// Rounds `x` to IEEE binary16 (round to nearest, ties to even); returns the bits.
uint16_t f16_from_double(double x);
double f16_to_double(uint16_t bits);

/// Rounds `x` to bfloat16 (round to nearest, ties to even); returns the bits.
uint16_t bf16_from_double(double x);
double bf16_to_double(uint16_t bits);

/// Rounds a float to TF32 the way the tensor cores' `cvt.rna.tf32.f32` does: to nearest with
/// ties away from zero, keeping 10 mantissa bits; the result is still an f32 value.
float round_to_tf32(float x);

}  // namespace tessera
