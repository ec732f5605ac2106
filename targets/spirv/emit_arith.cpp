/// \file Constants and the elementwise arithmetic, bitwise, shift, min/max, compare and select
/// ops, with the IR's integer rules (wrapping; the interpreter's answers for division by zero and
/// over-wide shifts) and float rules (no contraction; NaN and signed-zero rules of min/max).
#include <cstring>

#include "core/interp/scalar.h"
#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

using ir::DType;
using ir::OpKind;

namespace {

/// One row per op: the instruction for signed integers, unsigned integers and floats.
struct ArithRow {
  OpKind kind;
  spv::Op sint, uint, flt;
};
constexpr ArithRow kArith[] = {
    {OpKind::Add, spv::OpIAdd, spv::OpIAdd, spv::OpFAdd},
    {OpKind::Sub, spv::OpISub, spv::OpISub, spv::OpFSub},
    {OpKind::Mul, spv::OpIMul, spv::OpIMul, spv::OpFMul},
    {OpKind::Div, spv::OpSDiv, spv::OpUDiv, spv::OpFDiv},
    {OpKind::Rem, spv::OpSRem, spv::OpUMod, spv::OpFRem},
    {OpKind::And, spv::OpBitwiseAnd, spv::OpBitwiseAnd, spv::OpNop},
    {OpKind::Or, spv::OpBitwiseOr, spv::OpBitwiseOr, spv::OpNop},
    {OpKind::Xor, spv::OpBitwiseXor, spv::OpBitwiseXor, spv::OpNop},
    {OpKind::CmpEq, spv::OpIEqual, spv::OpIEqual, spv::OpFOrdEqual},
    {OpKind::CmpNe, spv::OpINotEqual, spv::OpINotEqual, spv::OpFUnordNotEqual},
    {OpKind::CmpLt, spv::OpSLessThan, spv::OpULessThan, spv::OpFOrdLessThan},
    {OpKind::CmpLe, spv::OpSLessThanEqual, spv::OpULessThanEqual, spv::OpFOrdLessThanEqual},
    {OpKind::CmpGt, spv::OpSGreaterThan, spv::OpUGreaterThan, spv::OpFOrdGreaterThan},
    {OpKind::CmpGe, spv::OpSGreaterThanEqual, spv::OpUGreaterThanEqual,
     spv::OpFOrdGreaterThanEqual},
};

const ArithRow& row(OpKind kind) {
  for (const ArithRow& r : kArith)
    if (r.kind == kind) return r;
  TESSERA_CHECK(false, "SPIR-V: no arithmetic row for '", ir::op_name(kind), "'");
  return kArith[0];
}

}  // namespace

namespace {

/// Is a float constant of `width` bits (bf16: its f32 bits) +-0, +-inf or NaN?
bool is_special_float(uint64_t bits, uint32_t width) {
  const int mantissa = width == 16 ? 10 : width == 32 ? 23 : 52;
  const uint64_t exponent = width == 16 ? 0x1f : width == 32 ? 0xff : 0x7ff;
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t magnitude = bits & ~sign;
  return magnitude == 0 || ((bits >> mantissa) & exponent) == exponent;
}

}  // namespace

/// A special constant becomes a value the driver cannot know while compiling: chosen by whether
/// the launch's grid is empty, which it never is (num_programs(0) is at least 1), against 1.5, an
/// arm no folding rule treats specially. It costs a compare and a select where it is used.
Value Emitter::float_operand(const ir::Value* v) {
  Value value = get(v);
  if (!target.has(target::Quirk::SpecialConstantFolding) || !v->def ||
      v->def->kind != OpKind::Constant || !v->type.is_float() || !v->type.shape.empty())
    return value;
  interp::RuntimeValue c = interp::constant_value(*v->def);
  uint64_t bits = 0;
  std::memcpy(&bits, c.raw(), static_cast<size_t>(c.elem_bytes()));
  if (v->type.dtype == DType::bf16) bits <<= 16;  // held in f32
  if (!is_special_float(bits, b.width(value.type))) return value;
  Value never = grid_is_empty();
  return b.select(never, b.c_float(value.type, 1.5), value);
}

/// Quirk::WideCompareFolding: an integer constant becomes `num_programs(0) == 0 ? ~c : c`, a value
/// the driver cannot know while compiling (the grid is never empty); other values stay.
Value Emitter::opaque_int(const ir::Value* v, Value value) {
  std::optional<int64_t> known = constant_of(v);
  if (!known) return value;
  Value grid_x = num_programs_[0];
  Value never = b.compare(spv::OpIEqual, grid_x, b.c_int(grid_x.type, 0));
  return b.select(never, b.c_int(value.type, ~static_cast<uint64_t>(*known)), value);
}

/// The constant's bits exactly as the interpreter computes them (its attribute converted to the
/// dtype by the cast rules: 2.5 as i1 is true, 1e10 as i32 saturates, ...).
void Emitter::emit_constant(const ir::Op& op) {
  interp::RuntimeValue v = interp::constant_value(op);
  uint64_t bits = 0;
  std::memcpy(&bits, v.raw(), static_cast<size_t>(v.elem_bytes()));
  const ir::Type& t = op.result()->type;
  if (t.is_ptr) return set(op.result(), b.c_int(b.t_uint(64), bits));
  switch (t.dtype) {
    case DType::i1:
      return set(op.result(), b.c_bool(bits != 0));
    case DType::bf16:
      return set(op.result(), b.c_float_bits(b.t_float(32), bits << 16));
    case DType::f16:
    case DType::f32:
    case DType::f64:
      return set(op.result(), b.c_float_bits(value_type(t), bits));
    default:
      return set(op.result(), b.c_int(value_type(t), bits));
  }
}

Value Emitter::fbinary(spv::Op opcode, Value a, Value c) {
  Value r = b.binary(opcode, a, c);
  if (opcode == spv::OpFAdd || opcode == spv::OpFSub || opcode == spv::OpFMul)
    b.decorate(r.id, spv::DecorationNoContraction);
  return r;
}

namespace {

/// The sign bit of a float (f16 goes through an exact f32, so no 16-bit integer is needed).
Value sign_bit(Builder& b, Value x) {
  if (b.width(x.type) == 16) x = b.convert(spv::OpFConvert, b.t_float(32), x);
  uint32_t w = b.width(x.type);
  uint32_t sint = b.t_int(w, true);
  return b.compare(spv::OpSLessThan, b.bitcast(sint, x), b.c_int(sint, 0));
}

/// The i1 forms: arithmetic wraps modulo 2; i1 is unsigned (min = and, max = or).
Value bool_binary(Builder& b, OpKind kind, Value a, Value c) {
  switch (kind) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Xor:
      return b.binary(spv::OpLogicalNotEqual, a, c);
    case OpKind::Mul:
    case OpKind::And:
    case OpKind::Min:
      return b.binary(spv::OpLogicalAnd, a, c);
    case OpKind::Or:
    case OpKind::Max:
      return b.binary(spv::OpLogicalOr, a, c);
    case OpKind::Div:  // x / 1 == x; x / 0 == 0
      return b.binary(spv::OpLogicalAnd, a, c);
    case OpKind::Rem:  // x % 1 == 0; x % 0 == x; shifts by >= 1 bit give 0
    case OpKind::Shl:
    case OpKind::Shr:
      return b.binary(spv::OpLogicalAnd, a, b.unary(spv::OpLogicalNot, c));
    default:
      TESSERA_CHECK(false, "SPIR-V: no i1 form of '", ir::op_name(kind), "'");
      return a;
  }
}

}  // namespace

/// Vulkan defines f32 division only for |c| in [2^-126, 2^126]; NVIDIA's driver divides by
/// multiplying with a reciprocal that underflows beyond (3.4e38 / 3.4e38 gives 0). Both operands
/// of a larger divisor are scaled by 1/4 first, which changes no quotient.
Value Emitter::fdiv(Value a, Value c) {
  if (b.width(a.type) != 32) return b.binary(spv::OpFDiv, a, c);
  uint32_t f = a.type;
  Value huge =
      b.compare(spv::OpFOrdGreaterThan, b.ext(GLSLstd450FAbs, f, {c}), b.c_float(f, 0x1p126));
  Value scale = b.select(huge, b.c_float(f, 0.25), b.c_float(f, 1));
  return b.binary(spv::OpFDiv, fbinary(spv::OpFMul, a, scale), fbinary(spv::OpFMul, c, scale));
}

Value Emitter::float_min_max(Value a, Value c, bool is_max, bool propagate) {
  if (target.has(target::Cap::IeeeMinMax)) {  // the driver's FMin/FMax ignore NaNs, order zeros
    Value r = b.ext(is_max ? GLSLstd450FMax : GLSLstd450FMin, a.type, {a, c});
    if (!propagate) return r;
    r = b.select(b.op(spv::OpIsNan, b.t_bool(), {c}), c, r);
    return b.select(b.op(spv::OpIsNan, b.t_bool(), {a}), a, r);
  }
  Value beats = b.compare(is_max ? spv::OpFOrdGreaterThan : spv::OpFOrdLessThan, a, c);
  // Equal operands differ at most in the zero's sign: max prefers +0, min prefers -0.
  Value a_negative = sign_bit(b, a);
  Value tie = b.binary(spv::OpLogicalAnd, b.compare(spv::OpFOrdEqual, a, c),
                       is_max ? b.unary(spv::OpLogicalNot, a_negative) : a_negative);
  Value pick_a = b.binary(spv::OpLogicalOr, beats, tie);
  Value nan_a = b.op(spv::OpIsNan, b.t_bool(), {a});
  Value nan_c = b.op(spv::OpIsNan, b.t_bool(), {c});
  Value nan_pick =
      propagate ? nan_a : b.binary(spv::OpLogicalAnd, nan_c, b.unary(spv::OpLogicalNot, nan_a));
  return b.select(b.binary(spv::OpLogicalOr, pick_a, nan_pick), a, c);
}

namespace {

/// -a (wrapping). `wrap` (Quirk::NarrowNegateUnwrapped): an 8- or 16-bit integer is negated in 32
/// bits and wrapped there explicitly (the low bits sign- or zero-extended) before narrowing, so
/// the narrow register holds the wrapped value whatever the driver's OpSNegate leaves in it.
Value negate(Builder& b, Value a, bool is_signed, bool wrap) {
  const uint32_t bits = b.width(a.type);
  if (!wrap || bits >= 32) return b.unary(spv::OpSNegate, a);
  const uint32_t wide = b.t_int(32, is_signed);
  const spv::Op convert = is_signed ? spv::OpSConvert : spv::OpUConvert;
  Value negated = b.binary(spv::OpISub, b.c_int(wide, 0), b.convert(convert, wide, a));
  Value wrapped = b.op(is_signed ? spv::OpBitFieldSExtract : spv::OpBitFieldUExtract, wide,
                       {negated, b.c_u32(0), b.c_u32(bits)});
  return b.convert(convert, a.type, wrapped);
}

/// Division and remainder with the interpreter's answers where C leaves them undefined:
/// x / 0 == 0, x % 0 == x, MIN / -1 == MIN (wrapping) and MIN % -1 == 0.
Value int_div_rem(Builder& b, bool is_div, bool is_signed, Value a, Value c,
                  std::optional<int64_t> known, bool wrap_negate) {
  // The remainder is a - (a / c) * c: NVIDIA's Vulkan driver computes OpSRem as if its operands
  // were unsigned (measured on an H200, driver 580), and GPUs divide in software either way.
  spv::Op div = is_signed ? spv::OpSDiv : spv::OpUDiv;
  auto rem_of = [&](Value q, Value d) {
    return b.binary(spv::OpISub, a, b.binary(spv::OpIMul, q, d));
  };
  if (known && *known != 0 && !(is_signed && *known == -1)) {
    Value q = b.binary(div, a, c);
    return is_div ? q : rem_of(q, c);
  }
  Value zero = b.c_int(a.type, 0), one = b.c_int(a.type, 1);
  Value by_zero = b.compare(spv::OpIEqual, c, zero);
  Value by_minus_one =
      is_signed ? b.compare(spv::OpIEqual, c, b.c_int(a.type, ~uint64_t{0})) : b.c_bool(false);
  Value odd = b.binary(spv::OpLogicalOr, by_zero, by_minus_one);
  Value safe = b.select(odd, one, c);
  Value q = b.binary(div, a, safe);
  if (is_div)
    return b.select(odd, b.select(by_zero, zero, negate(b, a, is_signed, wrap_negate)), q);
  return b.select(odd, b.select(by_zero, a, zero), rem_of(q, safe));
}

/// Shifts by >= the bit width (or a negative count) give 0, or the sign fill for an arithmetic
/// right shift, as on PTX and in the interpreter.
Value int_shift(Builder& b, bool left, bool is_signed, Value a, Value c,
                std::optional<int64_t> known) {
  uint32_t bits = b.width(a.type);
  spv::Op opcode = left ? spv::OpShiftLeftLogical
                        : (is_signed ? spv::OpShiftRightArithmetic : spv::OpShiftRightLogical);
  if (known && *known >= 0 && *known < bits) return b.binary(opcode, a, c);
  uint32_t uint = b.t_uint(bits);
  Value too_far = b.compare(spv::OpUGreaterThanEqual, b.bitcast(uint, c), b.c_int(uint, bits));
  if (!left && is_signed)
    return b.binary(opcode, a, b.select(too_far, b.c_int(c.type, bits - 1), c));
  Value shifted = b.binary(opcode, a, b.binary(spv::OpBitwiseAnd, c, b.c_int(c.type, bits - 1)));
  return b.select(too_far, b.c_int(a.type, 0), shifted);
}

}  // namespace

Value Emitter::binary_value(OpKind kind, DType dtype, Value a, Value c, bool propagate) {
  if (dtype == DType::i1) return bool_binary(b, kind, a, c);
  if (kind == OpKind::Min || kind == OpKind::Max) {
    if (ir::is_float(dtype)) return float_min_max(a, c, kind == OpKind::Max, propagate);
    spv::Op lt = ir::is_signed_int(dtype) ? spv::OpSLessThan : spv::OpULessThan;
    Value a_less = b.compare(lt, a, c);
    return kind == OpKind::Max ? b.select(a_less, c, a) : b.select(a_less, a, c);
  }
  if (ir::is_float(dtype)) {
    // f16 division and remainder are computed in f32 and rounded once; bf16 arithmetic always.
    // The remainder is exact, so its rounding is too.
    bool via_f32 = dtype == DType::bf16 ||
                   (dtype == DType::f16 && (kind == OpKind::Div || kind == OpKind::Rem));
    if (via_f32) {
      a = widen_to_f32(a, dtype);
      c = widen_to_f32(c, dtype);
    }
    Value r = kind == OpKind::Rem   ? fmod(a, c)
              : kind == OpKind::Div ? fdiv(a, c)
                                    : fbinary(row(kind).flt, a, c);
    return via_f32 ? narrow_from_f32(r, dtype) : r;
  }
  bool is_signed = ir::is_signed_int(dtype);
  if (kind == OpKind::Div || kind == OpKind::Rem)
    return int_div_rem(b, kind == OpKind::Div, is_signed, a, c, std::nullopt,
                       target.has(target::Quirk::NarrowNegateUnwrapped));
  if (kind == OpKind::Shl || kind == OpKind::Shr)
    return int_shift(b, kind == OpKind::Shl, is_signed, a, c, std::nullopt);
  const ArithRow& r = row(kind);
  return b.binary(is_signed ? r.sint : r.uint, a, c);
}

void Emitter::emit_binary(const ir::Op& op) {
  DType dtype = op.result()->type.dtype;
  Value a = float_operand(op.operand(0)), c = float_operand(op.operand(1));
  std::optional<int64_t> known = constant_of(op.operand(1));
  bool is_signed = ir::is_signed_int(dtype);
  if (known && dtype != DType::i1 && !op.result()->type.is_ptr) {
    if (op.kind == OpKind::Div || op.kind == OpKind::Rem)
      return set(op.result(), int_div_rem(b, op.kind == OpKind::Div, is_signed, a, c, known,
                                          target.has(target::Quirk::NarrowNegateUnwrapped)));
    if (op.kind == OpKind::Shl || op.kind == OpKind::Shr)
      return set(op.result(), int_shift(b, op.kind == OpKind::Shl, is_signed, a, c, known));
  }
  set(op.result(), binary_value(op.kind, dtype, a, c, ir::propagates_nan(&op)));
}

void Emitter::emit_compare(const ir::Op& op) {
  const ir::Type& t = op.operand(0)->type;
  Value a = float_operand(op.operand(0)), c = float_operand(op.operand(1));
  if (t.is_bool()) {
    // i1 is unsigned: false < true.
    auto lnot = [&](Value v) { return b.unary(spv::OpLogicalNot, v); };
    Value r;
    switch (op.kind) {
      case OpKind::CmpEq:
        r = b.binary(spv::OpLogicalEqual, a, c);
        break;
      case OpKind::CmpNe:
        r = b.binary(spv::OpLogicalNotEqual, a, c);
        break;
      case OpKind::CmpLt:
        r = b.binary(spv::OpLogicalAnd, lnot(a), c);
        break;
      case OpKind::CmpLe:
        r = b.binary(spv::OpLogicalOr, lnot(a), c);
        break;
      case OpKind::CmpGt:
        r = b.binary(spv::OpLogicalAnd, a, lnot(c));
        break;
      default:
        r = b.binary(spv::OpLogicalOr, a, lnot(c));
        break;
    }
    return set(op.result(), r);
  }
  const ArithRow& r = row(op.kind);
  const bool is_signed = ir::is_signed_int(t.dtype) && !t.is_ptr;
  spv::Op opcode = t.is_float() ? r.flt : (is_signed ? r.sint : r.uint);
  if (is_signed && t.dtype == DType::i64 && op.kind != OpKind::CmpEq && op.kind != OpKind::CmpNe &&
      target.has(target::Quirk::WideCompareFolding)) {
    a = opaque_int(op.operand(0), a);
    c = opaque_int(op.operand(1), c);
  }
  set(op.result(), b.compare(opcode, a, c));
}

void Emitter::emit_unary(const ir::Op& op) {
  const ir::Type& t = op.result()->type;
  Value a = get(op.operand(0));
  if (t.is_bool())  // -x == |x| == x modulo 2
    return set(op.result(), op.kind == OpKind::Not ? b.unary(spv::OpLogicalNot, a) : a);
  if (op.kind == OpKind::Not) return set(op.result(), b.unary(spv::OpNot, a));
  if (t.is_float()) {
    if (op.kind == OpKind::Neg) return set(op.result(), b.unary(spv::OpFNegate, a));
    return set(op.result(), b.ext(GLSLstd450FAbs, a.type, {a}));
  }
  const bool is_signed = ir::is_signed_int(t.dtype);
  const bool wrap = target.has(target::Quirk::NarrowNegateUnwrapped);
  if (op.kind == OpKind::Neg) return set(op.result(), negate(b, a, is_signed, wrap));
  if (!is_signed) return set(op.result(), a);  // |x| of an unsigned x
  Value negative = b.compare(spv::OpSLessThan, a, b.c_int(a.type, 0));
  set(op.result(), b.select(negative, negate(b, a, is_signed, wrap), a));  // |MIN| == MIN
}

void Emitter::emit_where(const ir::Op& op) {
  set(op.result(), b.select(get(op.operand(0)), get(op.operand(1)), get(op.operand(2))));
}

}  // namespace tessera::spirv::impl
