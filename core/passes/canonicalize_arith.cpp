/// \file Canonicalization's arithmetic, bitwise and compare identities. Each one holds exactly
/// under ops.h: integer identities for every value (wrapping included); float identities only
/// where IEEE keeps every input, -0.0 and NaN included.
#include "core/passes/canonicalize_patterns.h"

namespace tessera::passes::canon {

using ir::Op;
using ir::OpKind;
using ir::Value;

namespace {

bool is_int(const Value* v) {
  return v->type.is_int();
}
bool is_float(const Value* v) {
  return v->type.is_float();
}

Scalar zero_of(const Op* op) {
  return Scalar::from_bits(op->result()->type.dtype, 0);
}

}  // namespace

bool constant_right(Op* op) {
  if (!op->has(ir::kCommutative) || op->operands.size() != 2) return false;
  if (!is_constant(op->operand(0)) || is_constant(op->operand(1))) return false;
  std::swap(op->operands[0], op->operands[1]);
  return true;
}

bool double_negation(Op* op) {
  if (op->kind != OpKind::Neg && op->kind != OpKind::Not) return false;
  Op* inner = def_of(op->operand(0), op->kind);
  return inner && replace_with(op, inner->operand(0));
}

bool additive_identity(Op* op) {
  if (op->kind != OpKind::Add && op->kind != OpKind::Sub && op->kind != OpKind::PtrAdd)
    return false;
  Value* x = op->operand(0);
  Value* y = op->operand(1);
  if (op->kind == OpKind::PtrAdd) return is_zero(y) && replace_with(op, x);  // same type only
  if (is_float(x)) {
    // x + (-0.0) and x - (+0.0) give x for every x; x + (+0.0) turns -0.0 into +0.0.
    const double neutral = op->kind == OpKind::Add ? -0.0 : 0.0;
    if (is_float_bits(y, neutral)) return replace_with(op, x);
    return op->kind == OpKind::Add && is_float_bits(x, -0.0) && replace_with(op, y);
  }
  if (!is_int(x)) return false;
  if (is_zero(y)) return replace_with(op, x);
  return op->kind == OpKind::Add && is_zero(x) && replace_with(op, y);
}

bool multiplicative_identity(Op* op) {
  if (op->kind != OpKind::Mul && op->kind != OpKind::Div) return false;
  Value* x = op->operand(0);
  Value* y = op->operand(1);
  if (!is_int(x) && !is_float(x)) return false;
  if (is_one(y)) return replace_with(op, x);  // x * 1.0 and x / 1.0 are exact for every x
  if (op->kind == OpKind::Div) return false;
  if (is_one(x)) return replace_with(op, y);
  // Integer x * 0 is 0; float x * 0 is NaN for inf and NaN, and -0.0 for negative x.
  if (is_int(x) && (is_zero(x) || is_zero(y))) return replace_with_constant(op, zero_of(op));
  return false;
}

bool bitwise_identity(Op* op) {
  if (op->operands.size() != 2 || !is_int(op->operand(0))) return false;
  Value* x = op->operand(0);
  Value* y = op->operand(1);
  switch (op->kind) {
    case OpKind::And:
      if (is_all_ones(y)) return replace_with(op, x);
      if (is_all_ones(x)) return replace_with(op, y);
      if (is_zero(x) || is_zero(y)) return replace_with_constant(op, zero_of(op));
      return false;
    case OpKind::Or:
    case OpKind::Xor:
      if (is_zero(y)) return replace_with(op, x);
      return is_zero(x) && replace_with(op, y);
    case OpKind::Shl:
    case OpKind::Shr:
      return is_zero(y) && replace_with(op, x);
    default:
      return false;
  }
}

bool self_inverse(Op* op) {
  if (op->kind != OpKind::Sub && op->kind != OpKind::Xor) return false;
  if (op->operand(0) != op->operand(1) || !is_int(op->operand(0))) return false;
  return replace_with_constant(op, zero_of(op));
}

bool self_compare(Op* op) {
  if (!op->has(ir::kCompare) || op->operand(0) != op->operand(1)) return false;
  if (!is_int(op->operand(0))) return false;  // a float NaN is not equal to itself
  switch (op->kind) {
    case OpKind::CmpEq:
    case OpKind::CmpLe:
    case OpKind::CmpGe:
      return replace_with_constant(op, Scalar::boolean(true));
    default:
      return replace_with_constant(op, Scalar::boolean(false));
  }
}

}  // namespace tessera::passes::canon
