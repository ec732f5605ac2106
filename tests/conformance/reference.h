/// \file Host references written independently of the interpreter: Triton's promotion rules,
/// wrapping integer arithmetic, and conversions between dtypes by explicit integer rounding.
#pragma once

#include <cstdint>
#include <vector>

#include "tests/conformance/framework.h"

namespace tessera::conformance::ref {

/// Triton's binary-op promotion (computation_type_impl): f64 > f32 > {f16, bf16} (f16 with bf16
/// gives f32) > integers; among integers the wider wins, and with mixed signedness the unsigned
/// type wins unless the signed one is strictly wider.
DType promote(DType a, DType b);

/// An integer held in 64 bits, wrapped to dtype `t` and sign- or zero-extended.
int64_t wrap(DType t, uint64_t v);
/// Integer min and max of a dtype (as int64 bit patterns for u64).
int64_t int_min(DType t);
int64_t int_max(DType t);

/// Element `i` of `a` converted to dtype `to` by the cast rules (ops.h): integers wrap or extend
/// by the source's signedness; i1 is x != 0; int->float and float->float round to nearest even
/// once; float->int truncates toward zero (inputs must be in range). Returns the bits.
uint64_t convert_bits(const HostArray& a, size_t i, DType to);
/// The whole array converted.
HostArray convert(const HostArray& a, DType to);

/// An integer (sign-magnitude) rounded to nearest even with `mantissa` significand bits
/// (including the implicit one), as a double (exact: the result has <= 53 bits).
double round_int(uint64_t magnitude, bool negative, int mantissa);

/// Significand bits (with the implicit bit) of a float dtype.
int mantissa_bits(DType t);

}  // namespace tessera::conformance::ref
