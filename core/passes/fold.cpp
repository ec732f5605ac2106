/// \file Constant folding of pure ops over uniform constants, with the numerics of ops.h.
#include "core/passes/fold.h"

#include <bit>
#include <cmath>
#include <optional>
#include <vector>

#include "core/ir/op_table.h"
#include "core/ir/ops.h"
#include "core/ir/semantics.h"
#include "core/passes/rewrite.h"
#include "core/support/float16.h"
#include "core/support/float8.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using MaybeScalar = std::optional<Scalar>;

/// Signed for arithmetic purposes. i1 counts as an unsigned 1-bit integer (0 < 1), as the
/// interpreter defines it.
bool is_signed(DType t) {
  return ir::is_signed_int(t) && t != DType::i1;
}

// --- integers ---------------------------------------------------------------------------------

MaybeScalar int_divide(OpKind kind, const Scalar& a, const Scalar& b) {
  const DType t = a.dtype;
  if (b.i == 0) return std::nullopt;  // by zero: undefined
  if (!is_signed(t)) {
    const uint64_t r = kind == OpKind::Div ? a.bits() / b.bits() : a.bits() % b.bits();
    return Scalar::from_bits(t, r);
  }
  const int64_t min = wrap_int(t, uint64_t{1} << (ir::dtype_bits(t) - 1));
  if (a.i == min && b.i == -1) return std::nullopt;  // overflows: C leaves it undefined
  const int64_t r = kind == OpKind::Div ? a.i / b.i : a.i % b.i;
  return Scalar::from_bits(t, static_cast<uint64_t>(r));
}

MaybeScalar int_shift(OpKind kind, const Scalar& a, const Scalar& b) {
  const DType t = a.dtype;
  if (is_signed(t) && b.i < 0) return std::nullopt;
  if (b.bits() >= static_cast<uint64_t>(ir::dtype_bits(t))) return std::nullopt;
  const int count = static_cast<int>(b.bits());
  if (kind == OpKind::Shl) return Scalar::from_bits(t, a.bits() << count);
  if (is_signed(t)) return Scalar::from_bits(t, static_cast<uint64_t>(a.i >> count));
  return Scalar::from_bits(t, a.bits() >> count);  // zero-extended: a logical shift
}

/// a < b in the dtype's signedness.
bool int_less(const Scalar& a, const Scalar& b) {
  return is_signed(a.dtype) ? a.i < b.i : a.bits() < b.bits();
}

MaybeScalar int_binary(OpKind kind, const Scalar& a, const Scalar& b) {
  const DType t = a.dtype;
  const uint64_t x = a.bits();
  const uint64_t y = b.bits();
  switch (kind) {
    case OpKind::Add:
      return Scalar::from_bits(t, x + y);
    case OpKind::Sub:
      return Scalar::from_bits(t, x - y);
    case OpKind::Mul:
      return Scalar::from_bits(t, x * y);
    case OpKind::And:
      return Scalar::from_bits(t, x & y);
    case OpKind::Or:
      return Scalar::from_bits(t, x | y);
    case OpKind::Xor:
      return Scalar::from_bits(t, x ^ y);
    case OpKind::Div:
    case OpKind::Rem:
      return int_divide(kind, a, b);
    case OpKind::Shl:
    case OpKind::Shr:
      return int_shift(kind, a, b);
    case OpKind::Min:
    case OpKind::Max:
      return (kind == OpKind::Min) == int_less(a, b) ? a : b;
    default:
      return std::nullopt;
  }
}

std::optional<bool> int_compare(OpKind kind, const Scalar& a, const Scalar& b) {
  if (kind == OpKind::CmpEq) return a.i == b.i;
  if (kind == OpKind::CmpNe) return a.i != b.i;
  switch (kind) {
    case OpKind::CmpLt:
      return int_less(a, b);
    case OpKind::CmpLe:
      return !int_less(b, a);
    case OpKind::CmpGt:
      return int_less(b, a);
    case OpKind::CmpGe:
      return !int_less(a, b);
    default:
      return std::nullopt;
  }
}

// --- floats -----------------------------------------------------------------------------------

/// f32 arithmetic in float, exactly as a device does it.
double f32_arith(OpKind kind, float x, float y) {
  switch (kind) {
    case OpKind::Add:
      return x + y;
    case OpKind::Sub:
      return x - y;
    case OpKind::Mul:
      return x * y;
    case OpKind::Div:
      return x / y;
    default:
      return std::fmod(x, y);
  }
}

/// Other dtypes in double: exact for f64, and for f16/bf16 the double result rounds to the same
/// value as the exact one (53 >= 2p + 2 bits for +, -, *, /; fmod is exact).
double wide_arith(OpKind kind, double x, double y) {
  switch (kind) {
    case OpKind::Add:
      return x + y;
    case OpKind::Sub:
      return x - y;
    case OpKind::Mul:
      return x * y;
    case OpKind::Div:
      return x / y;
    default:
      return std::fmod(x, y);
  }
}

Scalar float_min_max(const Op* op, const Scalar& a, const Scalar& b) {
  const bool is_min = op->kind == OpKind::Min;
  if (std::isnan(a.f) || std::isnan(b.f)) {
    if (ir::propagates_nan(op)) return std::isnan(a.f) ? a : b;
    return std::isnan(a.f) ? b : a;  // "ignore": the other operand (NaN if both are)
  }
  if (a.f == b.f) {  // equal values; orders -0 < +0
    const bool a_lower = std::signbit(a.f) && !std::signbit(b.f);
    return is_min == a_lower ? a : b;
  }
  return is_min == (a.f < b.f) ? a : b;
}

MaybeScalar float_binary(const Op* op, const Scalar& a, const Scalar& b) {
  switch (op->kind) {
    case OpKind::Min:
    case OpKind::Max:
      return float_min_max(op, a, b);
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Rem:
      break;
    default:
      return std::nullopt;
  }
  if (a.dtype == DType::f32)
    return Scalar::from_double(
        a.dtype, f32_arith(op->kind, static_cast<float>(a.f), static_cast<float>(b.f)));
  return Scalar::from_double(a.dtype, wide_arith(op->kind, a.f, b.f));
}

std::optional<bool> float_compare(OpKind kind, double a, double b) {
  switch (kind) {
    case OpKind::CmpEq:
      return a == b;
    case OpKind::CmpNe:
      return a != b;  // true when either is NaN
    case OpKind::CmpLt:
      return a < b;
    case OpKind::CmpLe:
      return a <= b;
    case OpKind::CmpGt:
      return a > b;
    case OpKind::CmpGe:
      return a >= b;
    default:
      return std::nullopt;
  }
}

MaybeScalar fold_unary(OpKind kind, const Scalar& a) {
  const DType t = a.dtype;
  if (a.is_float()) {
    if (kind == OpKind::Neg) return Scalar::from_double(t, -a.f);
    if (kind == OpKind::Abs) return Scalar::from_double(t, std::fabs(a.f));
    // The interpreter's definition of the math op (core/ir/semantics.h), not a copy of it.
    if (!ir::is_unary_math(kind)) return std::nullopt;
    return Scalar::from_double(t, ir::math_fn(kind)(a.f));
  }
  switch (kind) {
    case OpKind::Neg:
      return Scalar::from_bits(t, uint64_t{0} - a.bits());
    case OpKind::Not:
      return Scalar::from_bits(t, ~a.bits());
    case OpKind::Abs:  // wraps: abs(MIN) == MIN; identity for unsigned dtypes and i1
      return is_signed(t) && a.i < 0 ? Scalar::from_bits(t, uint64_t{0} - a.bits()) : a;
    default:
      return std::nullopt;
  }
}

/// a + b rounded to odd in double: when the sum is inexact the last bit is set, so rounding it
/// again to a format of <= 51 bits gives the correctly rounded sum (no double rounding).
double odd_sum(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return s;
  const double t = s - a;
  const double err = (a - (s - t)) + (b - t);  // TwoSum: a + b == s + err exactly
  uint64_t bits = std::bit_cast<uint64_t>(s);
  if (err == 0.0 || (bits & 1)) return s;
  bits = std::signbit(err) == std::signbit(s) ? bits + 1 : bits - 1;  // toward the exact sum
  return std::bit_cast<double>(bits);
}

/// fma with one rounding. f16/bf16 products are exact in double; the sum is rounded to odd.
Scalar fold_fma(const Scalar& a, const Scalar& b, const Scalar& c) {
  const DType t = a.dtype;
  if (!a.is_float()) return Scalar::from_bits(t, a.bits() * b.bits() + c.bits());
  if (t == DType::f64) return Scalar::from_double(t, std::fma(a.f, b.f, c.f));
  if (t == DType::f32) {
    const float r =
        std::fma(static_cast<float>(a.f), static_cast<float>(b.f), static_cast<float>(c.f));
    return Scalar::from_double(t, r);
  }
  return Scalar::from_double(t, odd_sum(a.f * b.f, c.f));
}

// --- casts ------------------------------------------------------------------------------------

MaybeScalar int_to_float(const Scalar& s, DType to) {
  const bool big_unsigned = ir::is_unsigned_int(s.dtype) && s.i < 0;  // a u64 >= 2^63
  if (to == DType::f32) {
    const float r = big_unsigned ? static_cast<float>(s.bits()) : static_cast<float>(s.i);
    return Scalar::from_double(to, r);
  }
  const double d = big_unsigned ? static_cast<double>(s.bits()) : static_cast<double>(s.i);
  // Past 2^53 the conversion to double may round; bf16 could then round a second time.
  // (f16 overflows to infinity long before, so rounding twice cannot matter there.)
  if (to == DType::bf16 && std::fabs(d) >= 0x1p53) return std::nullopt;
  return Scalar::from_double(to, d);
}

MaybeScalar float_to_int(const Scalar& s, DType to) {
  if (std::isnan(s.f)) return std::nullopt;
  const double t = std::trunc(s.f);
  const int width = ir::dtype_bits(to);
  const bool signed_to = ir::is_signed_int(to);
  const double lo = signed_to ? -std::ldexp(1.0, width - 1) : 0.0;
  const double hi = std::ldexp(1.0, signed_to ? width - 1 : width);  // exclusive
  if (!(t >= lo && t < hi)) return std::nullopt;                     // out of range: undefined
  if (signed_to || t < 0x1p63)
    return Scalar::from_bits(to, static_cast<uint64_t>(static_cast<int64_t>(t)));
  return Scalar::from_bits(to, static_cast<uint64_t>(t));
}

MaybeScalar fold_cast(const Scalar& s, DType to) {
  if (to == DType::i1) return Scalar::boolean(s.is_float() ? s.f != 0.0 : s.i != 0);
  if (!s.is_float() && ir::is_int(to)) return Scalar::from_bits(to, s.bits());
  if (!s.is_float()) return int_to_float(s, to);
  if (ir::is_float(to)) return Scalar::from_double(to, s.f);
  return float_to_int(s, to);
}

/// The bit pattern of `s` in its dtype; nullopt for a NaN (its payload is not tracked).
std::optional<uint64_t> bit_pattern(const Scalar& s) {
  const int width = ir::dtype_bits(s.dtype);
  if (!s.is_float()) return width >= 64 ? s.bits() : s.bits() & ((uint64_t{1} << width) - 1);
  if (std::isnan(s.f)) return std::nullopt;
  switch (s.dtype) {
    case DType::f16:
      return f16_from_double(s.f);
    case DType::bf16:
      return bf16_from_double(s.f);
    case DType::f8e4m3:
      return f8e4m3_from_double(s.f);
    case DType::f8e5m2:
      return f8e5m2_from_double(s.f);
    case DType::f32:
      return std::bit_cast<uint32_t>(static_cast<float>(s.f));
    default:
      return std::bit_cast<uint64_t>(s.f);
  }
}

MaybeScalar from_bit_pattern(DType to, uint64_t bits) {
  if (ir::is_int(to)) return Scalar::from_bits(to, bits);
  double v = 0.0;
  switch (to) {
    case DType::f16:
      v = f16_to_double(static_cast<uint16_t>(bits));
      break;
    case DType::bf16:
      v = bf16_to_double(static_cast<uint16_t>(bits));
      break;
    case DType::f8e4m3:
      v = f8e4m3_to_double(static_cast<uint8_t>(bits));
      break;
    case DType::f8e5m2:
      v = f8e5m2_to_double(static_cast<uint8_t>(bits));
      break;
    case DType::f32:
      v = std::bit_cast<float>(static_cast<uint32_t>(bits));
      break;
    default:
      v = std::bit_cast<double>(bits);
      break;
  }
  if (std::isnan(v)) return std::nullopt;
  return Scalar{to, 0, v};
}

MaybeScalar fold_bitcast(const Scalar& s, DType to) {
  if (ir::dtype_bits(s.dtype) != ir::dtype_bits(to)) return std::nullopt;
  auto bits = bit_pattern(s);
  if (!bits) return std::nullopt;
  return from_bit_pattern(to, *bits);
}

// --- dispatch ---------------------------------------------------------------------------------

MaybeScalar fold_binary(const Op* op, const Scalar& a, const Scalar& b) {
  if (a.dtype != b.dtype) return std::nullopt;
  if (op->has(ir::kCompare)) {
    auto r = a.is_float() ? float_compare(op->kind, a.f, b.f) : int_compare(op->kind, a, b);
    if (!r) return std::nullopt;
    return Scalar::boolean(*r);
  }
  if (op->kind == OpKind::Cat) return same_bits(a, b) ? std::optional(a) : std::nullopt;
  if (ir::is_binary_math(op->kind)) {
    if (!a.is_float()) return std::nullopt;
    return Scalar::from_double(a.dtype, ir::math_fn2(op->kind)(a.f, b.f));
  }
  return a.is_float() ? float_binary(op, a, b) : int_binary(op->kind, a, b);
}

MaybeScalar fold_ternary(const Op* op, const Scalar& a, const Scalar& b, const Scalar& c) {
  if (op->kind == OpKind::Where) {
    if (a.dtype != DType::i1 || b.dtype != c.dtype) return std::nullopt;
    return a.i != 0 ? b : c;
  }
  if (op->kind != OpKind::Fma || a.dtype != b.dtype || a.dtype != c.dtype) return std::nullopt;
  return fold_fma(a, b, c);
}

MaybeScalar fold_one_operand(const Op* op, const Scalar& a) {
  const DType to = op->result()->type.dtype;
  switch (op->kind) {
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Permute:
      return a;  // every element stays the same value
    case OpKind::Cast:
      return fold_cast(a, to);
    case OpKind::Bitcast:
      return fold_bitcast(a, to);
    default:
      return fold_unary(op->kind, a);
  }
}

/// The constant `op` evaluates to, if it is a foldable op over constant operands.
MaybeScalar evaluate(const Op* op) {
  if (!op->has(ir::kPure) || !op->regions.empty() || op->results.size() != 1) return std::nullopt;
  if (op->operands.empty() || op->result()->type.is_ptr) return std::nullopt;
  std::vector<Scalar> args;
  for (const ir::Value* v : op->operands) {
    auto c = constant_value(v);
    if (!c) return std::nullopt;
    args.push_back(*c);
  }
  switch (args.size()) {
    case 1:
      return fold_one_operand(op, args[0]);
    case 2:
      return fold_binary(op, args[0], args[1]);
    case 3:
      return fold_ternary(op, args[0], args[1], args[2]);
    default:
      return std::nullopt;
  }
}

bool fold_region(ir::Region* body) {
  bool changed = false;
  // Pre-order visits each op after the ops defining its operands, so chains fold in one sweep.
  ir::walk(body, [&](Op* op) {
    auto value = evaluate(op);
    if (!value || value->dtype != op->result()->type.dtype) return;
    make_constant_in_place(op, *value);
    changed = true;
  });
  return changed;
}

}  // namespace

bool fold_constants(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) changed |= fold_region(fn->body);
  return changed;
}

}  // namespace tessera::passes
