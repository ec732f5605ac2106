/// \file Independent host references: promotion, integer wrapping and conversions.
#include "tests/conformance/reference.h"

#include <bit>
#include <cmath>
#include <limits>

#include "core/support/float16.h"

namespace tessera::conformance::ref {

namespace {

int rank_of_float(DType t) {
  switch (t) {
    case DType::f64:
      return 3;
    case DType::f32:
      return 2;
    default:
      return 1;  // f16, bf16
  }
}

}  // namespace

DType promote(DType a, DType b) {
  const bool fa = ir::is_float(a), fb = ir::is_float(b);
  if (fa && fb) {
    if (a == b) return a;
    const int ra = rank_of_float(a), rb = rank_of_float(b);
    if (ra != rb) return ra > rb ? a : b;
    return DType::f32;  // f16 with bf16
  }
  if (fa) return a;
  if (fb) return b;
  if (a == DType::i1) return b;
  if (b == DType::i1) return a;
  const int wa = ir::dtype_bits(a), wb = ir::dtype_bits(b);
  const bool sa = ir::is_signed_int(a), sb = ir::is_signed_int(b);
  if (sa == sb) return wa >= wb ? a : b;
  const DType s = sa ? a : b, u = sa ? b : a;
  return ir::dtype_bits(u) >= ir::dtype_bits(s) ? u : s;
}

int64_t wrap(DType t, uint64_t v) {
  if (t == DType::i1) return static_cast<int64_t>(v & 1);
  const int w = ir::dtype_bits(t);
  if (w == 64) return static_cast<int64_t>(v);
  const uint64_t mask = (uint64_t{1} << w) - 1;
  v &= mask;
  if (ir::is_signed_int(t) && (v >> (w - 1)) & 1) v |= ~mask;
  return static_cast<int64_t>(v);
}

int64_t int_min(DType t) {
  if (!ir::is_signed_int(t)) return 0;
  return static_cast<int64_t>(~uint64_t{0} << (ir::dtype_bits(t) - 1));
}

int64_t int_max(DType t) {
  const int w = ir::dtype_bits(t);
  if (ir::is_signed_int(t)) return static_cast<int64_t>((uint64_t{1} << (w - 1)) - 1);
  return w == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << w) - 1);
}

int mantissa_bits(DType t) {
  switch (t) {
    case DType::f16:
      return 11;
    case DType::bf16:
      return 8;
    case DType::f32:
      return 24;
    default:
      return 53;
  }
}

double round_int(uint64_t magnitude, bool negative, int mantissa) {
  if (magnitude == 0) return negative ? -0.0 : 0.0;
  const int width = 64 - std::countl_zero(magnitude);
  if (width <= mantissa) {
    const double d = static_cast<double>(magnitude);  // exact: <= 53 bits
    return negative ? -d : d;
  }
  const int drop = width - mantissa;
  uint64_t kept = magnitude >> drop;
  const uint64_t rest = magnitude & ((uint64_t{1} << drop) - 1);
  const uint64_t half = uint64_t{1} << (drop - 1);
  if (rest > half || (rest == half && (kept & 1))) ++kept;  // nearest, ties to even
  const double d = std::ldexp(static_cast<double>(kept), drop);
  return negative ? -d : d;
}

namespace {

/// Bits of a double that is already representable in float dtype `t` (or overflows to inf).
uint64_t float_bits(DType t, double v) {
  switch (t) {
    case DType::f16:
      return f16_from_double(v);
    case DType::bf16:
      return bf16_from_double(v);
    case DType::f32:
      return std::bit_cast<uint32_t>(static_cast<float>(v));
    default:
      return std::bit_cast<uint64_t>(v);
  }
}

/// A float truncated toward zero, as the bits of integer dtype `to` (in range by contract).
uint64_t truncate_to_int(double v, DType to) {
  const double t = std::trunc(v);
  if (ir::is_signed_int(to))
    return static_cast<uint64_t>(wrap(to, static_cast<uint64_t>(static_cast<int64_t>(t))));
  return static_cast<uint64_t>(
      wrap(to, t >= 0x1p63 ? static_cast<uint64_t>(t - 0x1p63) + (uint64_t{1} << 63)
                           : static_cast<uint64_t>(t)));
}

}  // namespace

uint64_t convert_bits(const HostArray& a, size_t i, DType to) {
  const DType from = a.dtype();
  const bool ff = ir::is_float(from), tf = ir::is_float(to);
  if (to == DType::i1) return ff ? (a.f(i) != 0 ? 1 : 0) : (a.bits(i) != 0 ? 1 : 0);
  if (!ff && !tf) return static_cast<uint64_t>(wrap(to, static_cast<uint64_t>(a.i(i))));
  if (!ff) {  // int -> float: one rounding from the exact integer
    const bool neg = ir::is_signed_int(from) && a.i(i) < 0;
    const uint64_t mag = neg ? 0 - static_cast<uint64_t>(a.i(i)) : static_cast<uint64_t>(a.i(i));
    return float_bits(to, round_int(mag, neg, mantissa_bits(to)));
  }
  if (!tf) return truncate_to_int(a.f(i), to);
  // float -> float: the source value is exact in double; one rounding to the target. f64 -> f32
  // uses the hardware conversion (correctly rounded), f16/bf16 the exact helpers.
  const double v = a.f(i);
  if (std::isnan(v)) return float_bits(to, std::numeric_limits<double>::quiet_NaN());
  return float_bits(to, v);
}

HostArray convert(const HostArray& a, DType to) {
  HostArray out(to, a.size());
  for (size_t i = 0; i < a.size(); ++i) out.set_bits(i, convert_bits(a, i, to));
  return out;
}

}  // namespace tessera::conformance::ref
