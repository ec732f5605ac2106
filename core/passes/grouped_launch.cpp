/// \file Grouped launch order (grouped_launch.h).
#include "core/passes/grouped_launch.h"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <vector>

#include "core/ir/attr_names.h"
#include "core/ir/builder.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

/// Is `op` inside a for or while loop?
bool in_loop(const Op* op) {
  for (const ir::Region* r = op->parent; r && r->parent; r = r->parent->parent)
    if (r->parent->kind == OpKind::For || r->parent->kind == OpKind::While) return true;
  return false;
}

/// Which of program_id(0) (bit 0) and program_id(1) (bit 1) a value depends on, through its
/// operands and, for a loop's arguments, the loop's bounds and initial values.
class IdDeps {
 public:
  unsigned of(const Value* v) {
    auto [it, inserted] = memo_.try_emplace(v, 0u);  // 0 while in progress: cycles add nothing
    if (!inserted) return it->second;
    unsigned deps = 0;
    if (v->is_arg()) {
      const Op* loop = v->owner ? v->owner->parent : nullptr;
      if (loop && loop->kind == OpKind::For)  // (iv, carried...) <- (lower, upper, step, inits...)
        for (size_t i = 0; i < loop->operands.size(); ++i)
          if (i < 3 || i == 2 + v->index) deps |= of(loop->operands[i]);
      if (loop && loop->kind == OpKind::While && v->index < loop->operands.size())
        deps |= of(loop->operands[v->index]);
    } else if (v->def->kind == OpKind::ProgramId) {
      const int64_t axis = v->def->int_attr(attr::kAxis);
      deps = axis == 0 ? 1u : axis == 1 ? 2u : 0u;
    } else {
      for (const Value* o : v->def->operands) deps |= of(o);
    }
    memo_[v] = deps;
    return deps;
  }

 private:
  std::unordered_map<const Value*, unsigned> memo_;
};

bool group_function(ir::Module& m, ir::Function& fn) {
  std::array<std::vector<Op*>, 2> ids;  // the program_id ops of axes 0 and 1
  std::vector<const Op*> loop_dots;
  bool atomics = false;
  ir::walk(fn.body, [&](Op* op) {
    if (op->kind == OpKind::ProgramId) {
      const int64_t axis = op->int_attr(attr::kAxis);
      if (axis == 0 || axis == 1) ids[static_cast<size_t>(axis)].push_back(op);
    }
    if (op->kind == OpKind::Dot && in_loop(op)) loop_dots.push_back(op);
    if (op->kind == OpKind::AtomicRmw || op->kind == OpKind::AtomicCas) atomics = true;
  });
  if (ids[0].empty() || ids[1].empty() || atomics) return false;
  // A dot whose A operand is one id's (a row of C tiles shares it) and whose B is the other's (a
  // column shares it): the matmul's tiles. Attention's Q, which depends on both, is not.
  IdDeps deps;
  const bool tiles = std::any_of(loop_dots.begin(), loop_dots.end(), [&](const Op* dot) {
    const unsigned a = deps.of(dot->operand(0)), b = deps.of(dot->operand(1));
    return (a == 1u && b == 2u) || (a == 2u && b == 1u);
  });
  if (!tiles) return false;

  const Type i32 = Type::scalar(DType::i32), i1 = Type::scalar(DType::i1);
  ir::Builder b(m);
  b.set_insertion_index(fn.body, 0);
  b.set_loc(ids[0].front()->loc);
  auto axis_op = [&](OpKind kind, int64_t axis) {
    return b.create_value(kind, {}, i32, {{attr::kAxis, axis}});
  };
  auto op2 = [&](OpKind kind, Value* l, Value* r, Type t) {
    return b.create_value(kind, {l, r}, t);
  };
  auto constant = [&](int64_t v) { return b.constant_int(i32, v); };
  Value* x = axis_op(OpKind::ProgramId, 0);
  Value* y = axis_op(OpKind::ProgramId, 1);
  Value* nx = axis_op(OpKind::NumPrograms, 0);
  Value* ny = axis_op(OpKind::NumPrograms, 1);
  // One statement per op: the IR's order must not depend on the order in which a C++ compiler
  // evaluates function arguments.
  Value* group = constant(kLaunchGroup);
  // The linear index and the group's extent fit an i32 where X <= 2^15 and Y <= 2^16 - 1.
  Value* x_limit = constant(int64_t{1} << 15);
  Value* x_fits = op2(OpKind::CmpLe, nx, x_limit, i1);
  Value* y_limit = constant((int64_t{1} << 16) - 1);
  Value* y_fits = op2(OpKind::CmpLe, ny, y_limit, i1);
  Value* fits = op2(OpKind::And, x_fits, y_fits, i1);
  // The arithmetic below runs whether or not the grid fits; on the extents clamped to the limits
  // it never overflows nor divides by zero (SPIR-V leaves a division by zero undefined), and
  // where the grid does not fit the `where`s below discard it.
  Value* cx = op2(OpKind::Min, nx, x_limit, i32);
  Value* cy = op2(OpKind::Min, ny, y_limit, i32);
  Value* row_start = op2(OpKind::Mul, y, cx, i32);
  Value* linear = op2(OpKind::Add, row_start, x, i32);
  Value* per_group = op2(OpKind::Mul, cy, group, i32);
  Value* group_index = op2(OpKind::Div, linear, per_group, i32);
  Value* first = op2(OpKind::Mul, group_index, group, i32);
  // size >= 1 always (first < X); the max says so to the sign analysis (axis_info's nonneg).
  Value* rows_left = op2(OpKind::Sub, cx, first, i32);
  Value* clipped = op2(OpKind::Min, rows_left, group, i32);
  Value* size = op2(OpKind::Max, clipped, constant(1), i32);
  Value* local = op2(OpKind::Rem, linear, per_group, i32);
  Value* row_in_group = op2(OpKind::Rem, local, size, i32);
  Value* id0 = op2(OpKind::Add, first, row_in_group, i32);
  Value* id1 = op2(OpKind::Div, local, size, i32);
  std::array<Value*, 2> renamed = {b.create_value(OpKind::Where, {fits, id0, x}, i32),
                                   b.create_value(OpKind::Where, {fits, id1, y}, i32)};
  for (size_t axis = 0; axis < 2; ++axis)
    for (Op* old : ids[axis]) ir::replace_all_uses(fn.body, old->result(), renamed[axis]);
  return true;  // the old program_id ops, now unused, go in the next dce
}

}  // namespace

bool group_launch_order(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) changed |= group_function(m, *fn);
  return changed;
}

}  // namespace tessera::passes
