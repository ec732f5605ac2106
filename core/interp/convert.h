/// \file The `cast` op's rules for one element, shared by the tile interpreter's cast and
/// constant and by the SIMT interpreter. Every conversion rounds once from the exact source value;
/// the cases ops.h leaves undefined (float -> int of NaN or out of range) are defined: NaN gives 0,
/// out-of-range values saturate to the target's min or max.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/interp/numeric.h"

namespace tessera::interp {

/// An integer as a double rounded to odd: exact below 2^53, otherwise the truncated value with
/// its last bit set when bits were dropped, so one more rounding to <= 51 bits is correct.
inline double int_to_double_odd(uint64_t magnitude, bool negative) {
  double d;
  if (magnitude < (uint64_t{1} << 53)) {
    d = static_cast<double>(magnitude);
  } else {
    const int shift = 64 - std::countl_zero(magnitude) - 53;
    uint64_t kept = magnitude >> shift;
    if (magnitude & ((uint64_t{1} << shift) - 1)) kept |= 1;
    d = std::ldexp(static_cast<double>(kept), shift);
  }
  return negative ? -d : d;
}

/// An integer element converted to float dtype To with one rounding.
template <class To, class From>
typename To::S int_to_float(typename From::S x) {
  if constexpr (!To::kNarrow) {
    return static_cast<typename To::S>(x);  // int -> float/double rounds to nearest even
  } else {
    bool negative = false;
    if constexpr (From::kSigned) negative = x < 0;
    const uint64_t bits = num::widen<From>(x);
    return To::from_double(int_to_double_odd(negative ? 0 - bits : bits, negative));
  }
}

/// A float truncated toward zero into integer dtype To; NaN -> 0, out of range saturates.
template <class To>
typename To::S float_to_int(double d) {
  using S = typename To::S;
  if (std::isnan(d)) return 0;
  const double t = std::trunc(d);
  if constexpr (To::kSigned) {
    const double lo = -std::ldexp(1.0, To::kBits - 1);  // exactly representable
    if (t < lo) return std::numeric_limits<S>::min();
    if (t >= -lo) return std::numeric_limits<S>::max();
    return static_cast<S>(static_cast<int64_t>(t));
  } else {
    if (t <= 0) return 0;
    if (t >= std::ldexp(1.0, To::kBits)) return num::wrap<To>(~uint64_t{0});
    return static_cast<S>(static_cast<uint64_t>(t));
  }
}

/// One element of dtype From converted to dtype To by the `cast` rules.
template <class To, class From>
typename To::S convert_element(typename From::S x) {
  using S = typename To::S;
  if constexpr (To::kDType == ir::DType::i1) {
    if constexpr (From::kFloat)
      return From::to_double(x) != 0 ? 1 : 0;
    else
      return x != 0 ? 1 : 0;
  } else if constexpr (!From::kFloat && !To::kFloat) {
    return num::wrap<To>(num::widen<From>(x));  // by the source's signedness
  } else if constexpr (!From::kFloat) {
    return int_to_float<To, From>(x);
  } else if constexpr (!To::kFloat) {
    return float_to_int<To>(From::to_double(x));
  } else if constexpr (To::kDType == From::kDType) {
    return x;
  } else {
    return static_cast<S>(To::from_double(From::to_double(x)));
  }
}

}  // namespace tessera::interp
