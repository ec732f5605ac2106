/// \file `cast` and `bitcast` by the rules of ops.h and the interpreter (float -> int saturates,
/// NaN -> 0), and the bf16 machinery: bf16 values live in f32 registers, and every conversion to
/// bf16 rounds once to nearest even from the exact value, through round-to-odd intermediates
/// where the source is wider than f32's 24 bits.
#include <cmath>

#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

using ir::DType;

Value Emitter::bf16_round(Value f32) {
  uint32_t u32 = b.t_uint(32);
  Value bits = b.bitcast(u32, f32);
  Value lsb = b.binary(spv::OpBitwiseAnd, b.binary(spv::OpShiftRightLogical, bits, b.c_u32(16)),
                       b.c_u32(1));
  Value biased = b.binary(spv::OpIAdd, bits, b.binary(spv::OpIAdd, lsb, b.c_u32(0x7fff)));
  Value rounded = b.binary(spv::OpBitwiseAnd, biased, b.c_u32(0xffff0000u));
  // A NaN becomes the quiet NaN of its sign, as the interpreter's encoder makes it.
  Value quiet = b.binary(spv::OpBitwiseOr, b.binary(spv::OpBitwiseAnd, bits, b.c_u32(0x80000000u)),
                         b.c_u32(0x7fc00000u));
  Value nan = b.op(spv::OpIsNan, b.t_bool(), {f32});
  return b.bitcast(f32.type, b.select(nan, quiet, rounded));
}

Value Emitter::narrow_from_f32(Value f32, DType dtype) {
  if (dtype == DType::bf16) return bf16_round(f32);
  if (dtype == DType::f16) return pin_rounding(b.convert(spv::OpFConvert, b.t_float(16), f32));
  return f32;
}

/// Quirk::NarrowFloatUnrounded: the f16 value's bits OR a zero that only the launch's grid
/// decides (num_programs(0) == 0, which never holds), so the driver cannot fold the rounding away
/// with a widening after it.
Value Emitter::pin_rounding(Value f16) {
  if (!target.has(target::Quirk::NarrowFloatUnrounded)) return f16;
  uint32_t u16 = b.t_uint(16);
  Value never = grid_is_empty();
  Value zero = b.select(never, b.c_int(u16, 1), b.c_int(u16, 0));
  return b.bitcast(f16.type, b.binary(spv::OpBitwiseOr, b.bitcast(u16, f16), zero));
}

Value Emitter::widen_to_f32(Value v, DType dtype) {
  if (dtype == DType::f16) return b.convert(spv::OpFConvert, b.t_float(32), v);
  return v;
}

/// TwoSum gives the rounding error of s = a + b exactly; an inexact s with an even last bit moves
/// one ulp toward the exact sum.
Value Emitter::odd_sum_f32(Value a, Value c) {
  Value s = fbinary(spv::OpFAdd, a, c);
  Value t = fbinary(spv::OpFSub, s, a);
  Value lo = fbinary(spv::OpFAdd, fbinary(spv::OpFSub, a, fbinary(spv::OpFSub, s, t)),
                     fbinary(spv::OpFSub, c, t));
  Value inexact = b.compare(spv::OpFOrdNotEqual, lo, b.c_float(lo.type, 0));  // false when s is inf
  uint32_t u32 = b.t_uint(32);
  Value bits = b.bitcast(u32, s);
  Value even = b.compare(spv::OpIEqual, b.binary(spv::OpBitwiseAnd, bits, b.c_u32(1)), b.c_u32(0));
  Value same_sign =
      b.compare(spv::OpULessThan, b.binary(spv::OpBitwiseXor, bits, b.bitcast(u32, lo)),
                b.c_u32(0x80000000u));
  Value stepped = b.select(same_sign, b.binary(spv::OpIAdd, bits, b.c_u32(1)),
                           b.binary(spv::OpISub, bits, b.c_u32(1)));
  Value odd = b.select(b.binary(spv::OpLogicalAnd, inexact, even), stepped, bits);
  return b.bitcast(s.type, odd);
}

namespace {

/// An f64 as an f32 rounded to odd: the nearest-even f32, stepped toward zero when it rounded
/// away from it, with the last bit set whenever the conversion was inexact.
Value f64_to_f32_odd(Builder& b, Value x) {
  uint32_t f32 = b.t_float(32), u32 = b.t_uint(32);
  Value r = b.convert(spv::OpFConvert, f32, x);
  Value back = b.convert(spv::OpFConvert, x.type, r);
  Value inexact = b.compare(spv::OpFOrdNotEqual, back, x);
  Value away = b.compare(spv::OpFOrdGreaterThan, b.ext(GLSLstd450FAbs, x.type, {back}),
                         b.ext(GLSLstd450FAbs, x.type, {x}));
  Value bits = b.bitcast(u32, r);
  Value truncated = b.select(away, b.binary(spv::OpISub, bits, b.c_u32(1)), bits);
  Value odd = b.binary(spv::OpBitwiseOr, truncated, b.c_u32(1));
  return b.bitcast(f32, b.select(inexact, odd, bits));
}

/// A 32- or 64-bit integer as an f32 rounded to odd: its 24 leading significant bits with the
/// dropped bits ORed into the last one, scaled back exactly.
Value int_to_f32_odd(Builder& b, Value v, bool is_signed) {
  uint32_t bits = b.width(v.type);
  uint32_t uint = b.t_uint(bits), u32 = b.t_uint(32), i32 = b.t_int(32, true);
  Value negative = is_signed ? b.compare(spv::OpSLessThan, v, b.c_int(v.type, 0)) : b.c_bool(false);
  Value magnitude =
      b.bitcast(uint, is_signed ? b.select(negative, b.unary(spv::OpSNegate, v), v) : v);
  Value msb;  // -1 for zero
  if (bits == 64) {
    Value hi = b.convert(spv::OpUConvert, u32,
                         b.binary(spv::OpShiftRightLogical, magnitude, b.c_int(uint, 32)));
    Value lo = b.convert(spv::OpUConvert, u32, magnitude);
    Value hi_msb = b.binary(spv::OpIAdd, b.ext(GLSLstd450FindUMsb, i32, {hi}), b.c_int(i32, 32));
    msb = b.select(b.compare(spv::OpINotEqual, hi, b.c_u32(0)), hi_msb,
                   b.ext(GLSLstd450FindUMsb, i32, {lo}));
  } else {
    msb = b.ext(GLSLstd450FindUMsb, i32, {magnitude});
  }
  Value over = b.binary(spv::OpISub, msb, b.c_int(i32, 23));
  Value shift32 =
      b.select(b.compare(spv::OpSGreaterThan, over, b.c_int(i32, 0)), over, b.c_int(i32, 0));
  Value shift = bits == 64 ? b.convert(spv::OpUConvert, uint, b.bitcast(u32, shift32))
                           : b.bitcast(uint, shift32);
  Value kept = b.binary(spv::OpShiftRightLogical, magnitude, shift);
  Value dropped_mask = b.binary(
      spv::OpISub, b.binary(spv::OpShiftLeftLogical, b.c_int(uint, 1), shift), b.c_int(uint, 1));
  Value sticky = b.compare(spv::OpINotEqual, b.binary(spv::OpBitwiseAnd, magnitude, dropped_mask),
                           b.c_int(uint, 0));
  kept = b.binary(spv::OpBitwiseOr, kept, b.select(sticky, b.c_int(uint, 1), b.c_int(uint, 0)));
  uint32_t f32 = b.t_float(32);
  Value f = b.ext(GLSLstd450Ldexp, f32, {b.convert(spv::OpConvertUToF, f32, kept), shift32});
  return b.select(negative, b.unary(spv::OpFNegate, f), f);
}

/// Truncation toward zero with the interpreter's saturation: NaN -> 0, values beyond the
/// destination's range -> its min or max. Out-of-range inputs never reach the conversion.
Value float_to_int(Emitter& e, Value x, DType to) {
  Builder& b = e.b;
  int bits = ir::dtype_bits(to);
  bool is_signed = ir::is_signed_int(to);
  double hi = std::ldexp(1.0, is_signed ? bits - 1 : bits);
  Value hi_c = b.c_float(x.type, hi);  // +inf when the float cannot hold it: only inf saturates
  Value at_or_above = b.compare(spv::OpFOrdGreaterThanEqual, x, hi_c);
  Value below;
  if (!is_signed) {
    below = b.compare(spv::OpFOrdLessThanEqual, x, b.c_float(x.type, 0));
  } else {
    Value lo_c = b.c_float(x.type, -hi);
    bool exact = std::isfinite(hi) && (b.width(x.type) != 16 || hi <= 65504);
    below = b.compare(exact ? spv::OpFOrdLessThan : spv::OpFOrdLessThanEqual, x, lo_c);
  }
  Value nan = b.op(spv::OpIsNan, b.t_bool(), {x});
  Value outside = b.binary(spv::OpLogicalOr, b.binary(spv::OpLogicalOr, at_or_above, below), nan);
  Value safe = b.select(outside, b.c_float(x.type, 0), x);
  uint32_t type = e.value_type(to);
  Value converted = b.convert(is_signed ? spv::OpConvertFToS : spv::OpConvertFToU, type, safe);
  uint64_t max = is_signed ? (uint64_t{1} << (bits - 1)) - 1
                           : (bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1);
  uint64_t min = is_signed ? ~uint64_t{0} << (bits - 1) : 0;
  Value r =
      b.select(at_or_above, b.c_int(type, max), b.select(below, b.c_int(type, min), converted));
  return b.select(nan, b.c_int(type, 0), r);
}

/// Integer width changes extend by the source's signedness; the result takes the target's.
Value int_resize(Emitter& e, Value v, DType from, DType to) {
  Builder& b = e.b;
  uint32_t fw = static_cast<uint32_t>(ir::dtype_bits(from));
  uint32_t tw = static_cast<uint32_t>(ir::dtype_bits(to));
  uint32_t type = e.value_type(to);
  if (fw == tw) return b.bitcast(type, v);
  if (tw > fw && ir::is_signed_int(from))
    return b.bitcast(type, b.convert(spv::OpSConvert, b.t_int(tw, true), v));
  return b.bitcast(type, b.convert(spv::OpUConvert, b.t_uint(tw), v));
}

/// f32 (or bf16 in its f32 register) to f64 on a device that may flush f32 subnormals and cannot
/// be told not to (no DenormPreserve for 32 bits: NVIDIA's Vulkan driver turns -1e-40f into -0):
/// a subnormal input is rebuilt from its bits in f64, which no device flushes, as
/// +-mantissa * 2^-149.
Value f32_to_f64_keeping_subnormals(Builder& b, Value x) {
  uint32_t u32 = b.t_uint(32), f64 = b.t_float(64);
  Value bits = b.bitcast(u32, x);
  Value mantissa = b.binary(spv::OpBitwiseAnd, bits, b.c_u32(0x7fffffu));
  Value exponent = b.binary(spv::OpBitwiseAnd, bits, b.c_u32(0x7f800000u));
  Value magnitude =
      b.binary(spv::OpFMul, b.convert(spv::OpConvertUToF, f64, mantissa), b.c_float(f64, 0x1p-149));
  Value negative = b.compare(spv::OpINotEqual,
                             b.binary(spv::OpBitwiseAnd, bits, b.c_u32(0x80000000u)), b.c_u32(0));
  Value rebuilt = b.select(negative, b.unary(spv::OpFNegate, magnitude), magnitude);
  Value subnormal = b.op(spv::OpLogicalAnd, b.t_bool(),
                         {b.compare(spv::OpIEqual, exponent, b.c_u32(0)),
                          b.compare(spv::OpINotEqual, mantissa, b.c_u32(0))});
  return b.select(subnormal, rebuilt, b.convert(spv::OpFConvert, f64, x));
}

}  // namespace

Value Emitter::convert(Value v, DType from, DType to) {
  if (from == to) return v;
  uint32_t type = value_type(to);
  if (to == DType::i1) {
    if (ir::is_float(from)) return b.compare(spv::OpFUnordNotEqual, v, b.c_float(v.type, 0));
    return b.compare(spv::OpINotEqual, v, b.c_int(v.type, 0));
  }
  if (from == DType::i1) return b.select(v, constant(to, 1), constant(to, 0));
  bool from_float = ir::is_float(from), to_float = ir::is_float(to);
  if (!from_float && !to_float) return int_resize(*this, v, from, to);
  if (!from_float) {
    bool is_signed = ir::is_signed_int(from);
    spv::Op opcode = is_signed ? spv::OpConvertSToF : spv::OpConvertUToF;
    if (to != DType::bf16) return b.convert(opcode, type, v);
    if (ir::dtype_bits(from) <= 16) return bf16_round(b.convert(opcode, type, v));  // exact in f32
    return bf16_round(int_to_f32_odd(b, v, is_signed));
  }
  if (!to_float) return float_to_int(*this, v, to);
  if (to == DType::bf16) {
    if (from == DType::f64) return bf16_round(f64_to_f32_odd(b, v));
    return bf16_round(widen_to_f32(v, from));  // f16 and f32 are exact in f32
  }
  if (from == DType::bf16 && to == DType::f32) return v;
  // f64 -> f16 in one correct rounding: drivers may go through f32 and round twice (lavapipe
  // turned -106.4375000001 into -106.5); rounding to odd in f32 first makes the second exact.
  if (from == DType::f64 && to == DType::f16)
    return pin_rounding(b.convert(spv::OpFConvert, type, f64_to_f32_odd(b, v)));
  if (to == DType::f16) return pin_rounding(b.convert(spv::OpFConvert, type, v));
  if ((from == DType::f32 || from == DType::bf16) && to == DType::f64 &&
      !target.has(target::Cap::DenormPreserve32))
    return f32_to_f64_keeping_subnormals(b, v);
  return b.convert(spv::OpFConvert, type, v);
}

void Emitter::emit_cast(const ir::Op& op) {
  set(op.result(), convert(get(op.operand(0)), op.operand(0)->type.dtype, op.result()->type.dtype));
}

/// Same-width reinterpretation; bf16's bits are the top half of its f32 register.
void Emitter::emit_bitcast(const ir::Op& op) {
  const ir::Type& from = op.operand(0)->type;
  const ir::Type& to = op.result()->type;
  Value v = get(op.operand(0));
  uint32_t type = value_type(to);
  bool from_bf16 = !from.is_ptr && from.dtype == DType::bf16;
  bool to_bf16 = !to.is_ptr && to.dtype == DType::bf16;
  if (from_bf16 == to_bf16) return set(op.result(), b.bitcast(type, v));
  uint32_t u32 = b.t_uint(32), u16 = b.t_uint(16);
  if (from_bf16) {
    Value bits = b.binary(spv::OpShiftRightLogical, b.bitcast(u32, v), b.c_u32(16));
    return set(op.result(), b.bitcast(type, b.convert(spv::OpUConvert, u16, bits)));
  }
  Value wide = b.convert(spv::OpUConvert, u32, b.bitcast(u16, v));
  set(op.result(), b.bitcast(type, b.binary(spv::OpShiftLeftLogical, wide, b.c_u32(16))));
}

}  // namespace tessera::spirv::impl
