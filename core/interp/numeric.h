/// \file Scalar semantics of the tile IR, one element at a time: wrapping integer arithmetic,
/// the interpreter's definitions of the undefined cases, narrow-float rounding, min/max NaN rules
/// and conversions. The op families' loops (elementwise, reduce, scan, dot, atomics) share these
/// so an op means the same thing wherever it appears.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/interp/value.h"
#include "core/ir/ops.h"

namespace tessera::interp::num {

// --- integers -------------------------------------------------------------------------------

/// The element's value as 64 bits: sign-extended for signed dtypes, zero-extended otherwise.
template <class T>
uint64_t widen(typename T::S x) {
  return static_cast<uint64_t>(x);  // integral conversion is modular, so signed extends
}
/// Truncates 64 bits to the dtype's width (i1 keeps bit 0).
template <class T>
typename T::S wrap(uint64_t v) {
  if constexpr (T::kBits == 1) return static_cast<typename T::S>(v & 1);
  return static_cast<typename T::S>(v);
}

template <class T>
typename T::S int_add(typename T::S a, typename T::S b) {
  return wrap<T>(widen<T>(a) + widen<T>(b));
}
template <class T>
typename T::S int_sub(typename T::S a, typename T::S b) {
  return wrap<T>(widen<T>(a) - widen<T>(b));
}
template <class T>
typename T::S int_mul(typename T::S a, typename T::S b) {
  return wrap<T>(widen<T>(a) * widen<T>(b));
}

/// C division, truncating. Defined here for the undefined cases: x / 0 == 0 and MIN / -1 wraps.
template <class T>
typename T::S int_div(typename T::S a, typename T::S b) {
  if (b == 0) return 0;
  if constexpr (T::kSigned) {
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    if (y == -1) return wrap<T>(0 - widen<T>(a));
    return wrap<T>(static_cast<uint64_t>(x / y));
  }
  return wrap<T>(widen<T>(a) / widen<T>(b));
}
/// C remainder (sign of the dividend). x % 0 == x, so x == (x / y) * y + x % y always holds.
template <class T>
typename T::S int_rem(typename T::S a, typename T::S b) {
  if (b == 0) return a;
  if constexpr (T::kSigned) {
    const int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
    if (y == -1) return 0;
    return wrap<T>(static_cast<uint64_t>(x % y));
  }
  return wrap<T>(widen<T>(a) % widen<T>(b));
}

/// The element's bits zero-extended to 64 (a negative count reads as a huge one).
template <class T>
uint64_t unsigned_bits(typename T::S x) {
  if constexpr (T::kBits == 64)
    return widen<T>(x);
  else
    return widen<T>(x) & ((uint64_t{1} << T::kBits) - 1);
}

/// A count >= the bit width saturates like PTX's shl/shr: shl and logical shr give 0,
/// arithmetic shr gives the sign fill.
template <class T>
typename T::S int_shl(typename T::S a, typename T::S count) {
  const uint64_t c = unsigned_bits<T>(count);
  if (c >= static_cast<uint64_t>(T::kBits)) return 0;
  return wrap<T>(widen<T>(a) << c);
}
template <class T>
typename T::S int_shr(typename T::S a, typename T::S count) {
  const uint64_t c = unsigned_bits<T>(count);
  if constexpr (T::kSigned) {
    const int64_t x = static_cast<int64_t>(a);
    if (c >= static_cast<uint64_t>(T::kBits)) return x < 0 ? -1 : 0;
    return wrap<T>(static_cast<uint64_t>(x >> c));
  }
  if (c >= static_cast<uint64_t>(T::kBits)) return 0;
  return wrap<T>(widen<T>(a) >> c);
}

template <class T>
typename T::S int_neg(typename T::S a) {
  return wrap<T>(0 - widen<T>(a));
}
template <class T>
typename T::S int_abs(typename T::S a) {
  if constexpr (T::kSigned) return a < 0 ? int_neg<T>(a) : a;
  return a;
}

// --- floats ---------------------------------------------------------------------------------

/// a + b rounded to odd at double precision: the result's last bit is set when the exact sum was
/// not representable. Rounding that to a format of <= 51 bits gives the correctly rounded sum.
inline double odd_sum(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return s;
  const double t = s - a;
  const double lo = (a - (s - t)) + (b - t);  // Knuth's TwoSum: a + b == s + lo exactly
  if (lo == 0) return s;
  uint64_t bits = std::bit_cast<uint64_t>(s);
  if (bits & 1) return s;
  // Step one ulp toward the exact value: away from zero when lo has s's sign.
  const bool away = std::signbit(lo) == std::signbit(s);
  bits = away ? bits + 1 : bits - 1;
  return std::bit_cast<double>(bits);
}

template <class T>
typename T::S float_add(typename T::S a, typename T::S b) {
  if constexpr (T::kNarrow)
    return T::from_double(odd_sum(T::to_double(a), T::to_double(b)));
  else
    return a + b;
}
template <class T>
typename T::S float_sub(typename T::S a, typename T::S b) {
  if constexpr (T::kNarrow)
    return T::from_double(odd_sum(T::to_double(a), -T::to_double(b)));
  else
    return a - b;
}
/// Narrow products are exact in double; quotients rounded twice (double, then 11 or 8 bits)
/// are still correctly rounded because 53 >= 2p + 2.
template <class T>
typename T::S float_mul(typename T::S a, typename T::S b) {
  if constexpr (T::kNarrow)
    return T::from_double(T::to_double(a) * T::to_double(b));
  else
    return a * b;
}
template <class T>
typename T::S float_div(typename T::S a, typename T::S b) {
  if constexpr (T::kNarrow)
    return T::from_double(T::to_double(a) / T::to_double(b));
  else
    return a / b;
}
template <class T>
typename T::S float_rem(typename T::S a, typename T::S b) {
  return T::from_double(std::fmod(T::to_double(a), T::to_double(b)));  // fmod is exact
}
/// a * b + c with one rounding.
template <class T>
typename T::S float_fma(typename T::S a, typename T::S b, typename T::S c) {
  if constexpr (T::kNarrow)
    return T::from_double(odd_sum(T::to_double(a) * T::to_double(b), T::to_double(c)));
  else
    return std::fma(a, b, c);
}
template <class T>
typename T::S float_neg(typename T::S a) {
  if constexpr (T::kNarrow)
    return static_cast<typename T::S>(a ^ 0x8000);
  else
    return -a;
}
template <class T>
typename T::S float_abs(typename T::S a) {
  if constexpr (T::kNarrow)
    return static_cast<typename T::S>(a & 0x7fff);
  else
    return std::fabs(a);
}

/// max/min of the `max`/`min` ops: a NaN operand wins (propagate) or loses (ignore); -0 < +0.
/// The result is one of the operands, bit for bit.
template <class T>
typename T::S float_max(typename T::S a, typename T::S b, bool propagate) {
  const double x = T::to_double(a), y = T::to_double(b);
  if (std::isnan(x) || std::isnan(y)) {
    if (std::isnan(x) == propagate) return a;
    return b;
  }
  if (x == y) return std::signbit(x) ? b : a;
  return x > y ? a : b;
}
template <class T>
typename T::S float_min(typename T::S a, typename T::S b, bool propagate) {
  const double x = T::to_double(a), y = T::to_double(b);
  if (std::isnan(x) || std::isnan(y)) {
    if (std::isnan(x) == propagate) return a;
    return b;
  }
  if (x == y) return std::signbit(x) ? a : b;
  return x < y ? a : b;
}

// --- one rule per op, for integers and floats alike -----------------------------------------

template <class T>
typename T::S add(typename T::S a, typename T::S b) {
  if constexpr (T::kFloat)
    return float_add<T>(a, b);
  else
    return int_add<T>(a, b);
}
template <class T>
typename T::S sub(typename T::S a, typename T::S b) {
  if constexpr (T::kFloat)
    return float_sub<T>(a, b);
  else
    return int_sub<T>(a, b);
}
template <class T>
typename T::S div(typename T::S a, typename T::S b) {
  if constexpr (T::kFloat)
    return float_div<T>(a, b);
  else
    return int_div<T>(a, b);
}
template <class T>
typename T::S rem(typename T::S a, typename T::S b) {
  if constexpr (T::kFloat)
    return float_rem<T>(a, b);
  else
    return int_rem<T>(a, b);
}
template <class T>
typename T::S mul(typename T::S a, typename T::S b) {
  if constexpr (T::kFloat)
    return float_mul<T>(a, b);
  else
    return int_mul<T>(a, b);
}
template <class T>
typename T::S max(typename T::S a, typename T::S b, bool propagate = true) {
  if constexpr (T::kFloat)
    return float_max<T>(a, b, propagate);
  else
    return a < b ? b : a;
}
template <class T>
typename T::S min(typename T::S a, typename T::S b, bool propagate = true) {
  if constexpr (T::kFloat)
    return float_min<T>(a, b, propagate);
  else
    return b < a ? b : a;
}

/// Total "greater" used by argmax: NaN above everything, +0 above -0.
template <class T>
bool arg_greater(typename T::S a, typename T::S b) {
  if constexpr (T::kFloat) {
    const double x = T::to_double(a), y = T::to_double(b);
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && !std::isnan(y);
    if (x == y) return !std::signbit(x) && std::signbit(y);
    return x > y;
  } else {
    return a > b;
  }
}
/// Total "less" used by argmin: NaN below everything, -0 below +0.
template <class T>
bool arg_less(typename T::S a, typename T::S b) {
  if constexpr (T::kFloat) {
    const double x = T::to_double(a), y = T::to_double(b);
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && !std::isnan(y);
    if (x == y) return std::signbit(x) && !std::signbit(y);
    return x < y;
  } else {
    return a < b;
  }
}

// --- bitwise, sign, comparisons and atomics -------------------------------------------------

template <class T>
typename T::S bit_and(typename T::S a, typename T::S b) {
  return wrap<T>(widen<T>(a) & widen<T>(b));
}
template <class T>
typename T::S bit_or(typename T::S a, typename T::S b) {
  return wrap<T>(widen<T>(a) | widen<T>(b));
}
template <class T>
typename T::S bit_xor(typename T::S a, typename T::S b) {
  return wrap<T>(widen<T>(a) ^ widen<T>(b));
}
template <class T>
typename T::S bit_not(typename T::S a) {
  return wrap<T>(~widen<T>(a));
}
template <class T>
typename T::S neg(typename T::S a) {
  if constexpr (T::kFloat)
    return float_neg<T>(a);
  else
    return int_neg<T>(a);
}
template <class T>
typename T::S abs(typename T::S a) {
  if constexpr (T::kFloat)
    return float_abs<T>(a);
  else
    return int_abs<T>(a);
}

/// A comparison `pred` of two elements: integers by their signedness (i1 as 0 < 1), floats by
/// their values (NaN unordered, so only a "not equal" predicate is true on NaN).
template <class T, class Pred>
uint8_t compare(Pred pred, typename T::S x, typename T::S y) {
  if constexpr (T::kFloat)
    return pred(T::to_double(x), T::to_double(y));
  else
    return pred(x, y);
}

/// The new memory value of atomic op `kind` from the old one and the lane's operand. Float
/// max/min ignore NaN on both sides and order -0 < +0; bitwise kinds are integer-only (a float
/// dtype gets `old` back: the verifier rejects it first).
template <class T>
typename T::S atomic_rmw(ir::AtomicOp kind, typename T::S old, typename T::S val) {
  using ir::AtomicOp;
  switch (kind) {
    case AtomicOp::Add:
      return add<T>(old, val);
    case AtomicOp::Max:
      return max<T>(old, val, /*propagate=*/false);
    case AtomicOp::Min:
      return min<T>(old, val, /*propagate=*/false);
    case AtomicOp::Xchg:
      return val;
    default:
      break;
  }
  if constexpr (T::kFloat) {
    return old;
  } else {
    if (kind == AtomicOp::And) return bit_and<T>(old, val);
    if (kind == AtomicOp::Or) return bit_or<T>(old, val);
    return bit_xor<T>(old, val);
  }
}

}  // namespace tessera::interp::num
