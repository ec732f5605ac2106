/// \file Floating-point contraction (contract.h).
#include "core/passes/contract.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "core/ir/ops.h"
#include "core/passes/rewrite.h"

namespace tessera::passes {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Value;

bool fusible_dtype(const ir::Type& t) {
  return !t.is_ptr && (t.dtype == ir::DType::f32 || t.dtype == ir::DType::f64);
}

/// Operand slots naming each value, over the whole function (the IR keeps no use lists).
std::unordered_map<const Value*, int> use_counts(ir::Region* body) {
  std::unordered_map<const Value*, int> uses;
  ir::walk(body, [&](const Op* op) {
    for (const Value* v : op->operands) ++uses[v];
  });
  return uses;
}

/// `v` is a product that only `user` reads (once), of the same type as the sum.
Op* fusible_product(const Value* v, const Op* user,
                    const std::unordered_map<const Value*, int>& uses) {
  Op* def = v->def;
  if (!def || def->kind != OpKind::Mul || def->result()->type != user->result()->type)
    return nullptr;
  auto it = uses.find(v);
  return it != uses.end() && it->second == 1 ? def : nullptr;
}

Value* negate(ir::Module& m, Op* before, Value* v) {
  Op* neg = m.new_op(OpKind::Neg, {v}, {v->type}, {}, before->loc);
  neg->parent = before->parent;
  auto& ops = before->parent->ops;
  ops.insert(std::find(ops.begin(), ops.end(), before), neg);
  return neg->result();
}

}  // namespace

bool contract_fp(ir::Module& m) {
  ir::Region* body = m.kernel().body;
  const std::unordered_map<const Value*, int> uses = use_counts(body);
  std::vector<Op*> fused;  // the products, now without a use
  for (Op* op : collect_ops(body)) {
    if (!op->parent || (op->kind != OpKind::Add && op->kind != OpKind::Sub) ||
        !fusible_dtype(op->result()->type))
      continue;
    Value* lhs = op->operand(0);
    Value* rhs = op->operand(1);
    if (Op* mul = fusible_product(lhs, op, uses)) {  // a*b + c, a*b - c
      Value* c = op->kind == OpKind::Add ? rhs : negate(m, op, rhs);
      op->operands = {mul->operand(0), mul->operand(1), c};
      fused.push_back(mul);
    } else if (Op* mul2 = fusible_product(rhs, op, uses)) {  // c + a*b, c - a*b
      Value* a = op->kind == OpKind::Add ? mul2->operand(0) : negate(m, op, mul2->operand(0));
      op->operands = {a, mul2->operand(1), lhs};
      fused.push_back(mul2);
    } else {
      continue;
    }
    op->kind = OpKind::Fma;
  }
  for (Op* mul : fused) erase_op(mul);
  return !fused.empty();
}

}  // namespace tessera::passes
