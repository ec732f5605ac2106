/// \file Canonicalization driver and the rewrites of shapes, casts, selects, hints and dots.
/// The arithmetic identities live in canonicalize_arith.cpp.
#include "core/passes/canonicalize.h"

#include <array>

#include "core/ir/ops.h"
#include "core/passes/canonicalize_patterns.h"
#include "core/passes/rewrite.h"

namespace tessera::passes {
namespace canon {

using ir::Op;
using ir::OpKind;
using ir::Value;

bool replace_with(Op* op, Value* v) {
  if (op->results.size() != 1 || op->result()->type != v->type) return false;
  replace_op(op, v);
  return true;
}

bool replace_with_constant(Op* op, const Scalar& s) {
  if (op->results.size() != 1 || op->result()->type.dtype != s.dtype) return false;
  make_constant_in_place(op, s);
  return true;
}

Op* def_of(const Value* v, OpKind kind) {
  return v->def && v->def->kind == kind ? v->def : nullptr;
}

namespace {

bool is_shape_op(OpKind kind) {
  return kind == OpKind::Broadcast || kind == OpKind::ExpandDims || kind == OpKind::Reshape ||
         kind == OpKind::Permute;
}

/// splat(constant c) -> constant c of the tile type.
bool splat_of_constant(Op* op) {
  if (op->kind != OpKind::Splat) return false;
  auto c = constant_value(op->operand(0));
  return c && replace_with_constant(op, *c);
}

/// broadcast/expand_dims/reshape/permute of splat(s) -> splat(s); of a tile constant -> a tile
/// constant of the new shape (every element is the same either way).
bool reshape_of_uniform(Op* op) {
  if (!is_shape_op(op->kind)) return false;
  if (auto c = constant_value(op->operand(0))) return replace_with_constant(op, *c);
  Op* splat = def_of(op->operand(0), OpKind::Splat);
  if (!splat || splat->operand(0)->type != op->result()->type.element()) return false;
  op->kind = OpKind::Splat;
  op->operands = {splat->operand(0)};
  op->attrs.clear();
  return true;
}

bool is_identity_order(const std::vector<int64_t>& order) {
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] != static_cast<int64_t>(i)) return false;
  return true;
}

/// broadcast or reshape to the operand's type, permute with order 0, 1, ... -> the operand.
bool identity_shape(Op* op) {
  if (op->kind == OpKind::Permute) {
    if (!is_identity_order(ir::PermuteOp(op).order())) return false;
    return replace_with(op, op->operand(0));
  }
  if (op->kind != OpKind::Broadcast && op->kind != OpKind::Reshape) return false;
  return replace_with(op, op->operand(0));  // refuses a different type
}

/// cast or bitcast to the operand's own type -> the operand.
bool identity_cast(Op* op) {
  if (op->kind != OpKind::Cast && op->kind != OpKind::Bitcast) return false;
  return replace_with(op, op->operand(0));
}

/// bitcast(bitcast x) -> bitcast x: reinterpreting the same bits twice.
bool bitcast_of_bitcast(Op* op) {
  if (op->kind != OpKind::Bitcast) return false;
  Op* inner = def_of(op->operand(0), OpKind::Bitcast);
  if (!inner) return false;
  op->operands[0] = inner->operand(0);
  return true;
}

/// where(true, a, b) -> a; where(false, a, b) -> b; where(c, a, a) -> a.
bool constant_where(Op* op) {
  if (op->kind != OpKind::Where) return false;
  Value* a = op->operand(1);
  Value* b = op->operand(2);
  if (a == b) return replace_with(op, a);
  auto c = constant_value(op->operand(0));
  if (!c || c->dtype != ir::DType::i1) return false;
  return replace_with(op, c->i != 0 ? a : b);
}

/// multiple_of/max_contiguous of a constant -> the constant (the promise adds nothing).
bool hint_of_constant(Op* op) {
  if (op->kind != OpKind::MultipleOf && op->kind != OpKind::MaxContiguous) return false;
  if (!is_constant(op->operand(0))) return false;
  return replace_with(op, op->operand(0));
}

/// add(dot(a, b, 0), c) -> dot(a, b, c) when the add is the dot's only use. The add becomes
/// the dot in place (it sits after c's definition); the old dot goes. Both must be in one region,
/// or a dot hoisted out of a loop would move into it.
bool dot_accumulate(Op* op) {
  if (op->kind != OpKind::Add) return false;
  for (size_t side = 0; side < 2; ++side) {
    Value* product = op->operand(side);
    Value* acc = op->operand(1 - side);
    Op* dot = def_of(product, OpKind::Dot);
    if (!dot || dot->parent != op->parent || !is_zero(dot->operand(2))) continue;
    if (product->type != op->result()->type || acc->type != product->type) continue;
    if (count_uses_of(op, product) != 1) continue;
    op->kind = OpKind::Dot;
    op->operands = {dot->operand(0), dot->operand(1), acc};
    op->attrs = dot->attrs;
    op->loc = dot->loc;
    erase_op(dot);
    return true;
  }
  return false;
}

/// Shapes and constants first, so the identities below see constants wherever they can.
constexpr std::array<Pattern, 15> kPatterns = {
    splat_of_constant,  reshape_of_uniform, identity_shape,          identity_cast,
    bitcast_of_bitcast, constant_where,     hint_of_constant,        constant_right,
    double_negation,    additive_identity,  multiplicative_identity, bitwise_identity,
    self_inverse,       self_compare,       dot_accumulate,
};

bool rewrite(Op* op) {
  for (Pattern p : kPatterns)
    if (p(op)) return true;
  return false;
}

/// Each sweep visits every op once; a rewrite that enables another is caught by the next sweep.
constexpr int kMaxSweeps = 64;

bool canonicalize_region(ir::Region* body) {
  bool changed = false;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool any = false;
    for (Op* op : collect_ops(body)) {
      if (!op->parent) continue;  // erased by an earlier rewrite of this sweep
      any |= rewrite(op);
    }
    if (!any) break;
    changed = true;
  }
  return changed;
}

}  // namespace
}  // namespace canon

bool canonicalize(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) changed |= canon::canonicalize_region(fn->body);
  return changed;
}

}  // namespace tessera::passes
