/// \file Structured control flow: `if` as a selection construct, `for` and `while` as loop
/// constructs (header with OpLoopMerge, a continue block carrying the back edge, a merge block),
/// with OpPhi for the values the regions yield.
#include <algorithm>

#include "targets/spirv/emitter.h"

namespace tessera::spirv::impl {

namespace {

/// The values a region's terminator passes to its op.
std::vector<const ir::Value*> terminator_operands(const ir::Region* region) {
  const ir::Op* t = region->terminator();
  if (!t) return {};
  return {t->operands.begin(), t->operands.end()};
}

bool has_code(const ir::Region* region) {
  for (const ir::Op* op : region->ops)
    if (!op->has(ir::kTerminator)) return true;
  return false;
}

}  // namespace

void Emitter::emit_if(const ir::Op& op) {
  ir::IfOp i(&op);
  Value cond = get(i.cond());
  const ir::Region* regions[2] = {i.then_region(), i.else_region()};
  // Cooperative matrices are merged by phis, never by OpSelect (which the extension does not
  // spell out for them): the then side gets a block of its own, so the phi has two parents.
  const bool matrices = std::any_of(op.results.begin(), op.results.end(),
                                    [](const ir::Value* v) { return v->type.is_mat(); });
  if (!has_code(regions[0]) && !has_code(regions[1]) && !matrices) {
    // Both sides only forward values: a select each.
    auto t = terminator_operands(regions[0]), e = terminator_operands(regions[1]);
    for (size_t k = 0; k < op.results.size(); ++k)
      set(op.result(k), b.select(cond, get(t[k]), get(e[k])));
    return;
  }
  // A side without code branches straight to the merge block; its phi edge is the header's.
  uint32_t header = b.current_label(), merge = b.new_label();
  uint32_t targets[2] = {has_code(regions[0]) || matrices ? b.new_label() : merge,
                         has_code(regions[1]) ? b.new_label() : merge};
  b.selection_merge(merge);
  b.branch_cond(cond, targets[0], targets[1]);
  std::vector<Value> yielded[2];
  uint32_t from[2] = {header, header};
  for (int side = 0; side < 2; ++side) {
    if (targets[side] != merge) {
      b.begin_block(targets[side]);
      emit_region(*regions[side]);
      from[side] = b.current_label();
    }
    for (const ir::Value* v : terminator_operands(regions[side])) yielded[side].push_back(get(v));
    if (targets[side] != merge) b.branch(merge);
  }
  b.begin_block(merge);
  for (size_t k = 0; k < op.results.size(); ++k) {
    PhiRef phi = b.phi(yielded[0][k].type);
    b.add_incoming(phi, yielded[0][k], from[0]);
    b.add_incoming(phi, yielded[1][k], from[1]);
    set(op.result(k), phi.value);
  }
}

void Emitter::emit_for(const ir::Op& op) {
  ir::ForOp f(&op);
  Value lower = get(f.lower()), upper = get(f.upper()), step = get(f.step());
  bool is_signed = ir::is_signed_int(f.lower()->type.dtype);
  uint32_t entry = b.current_label(), header = b.new_label(), body = b.new_label(),
           latch = b.new_label(), merge = b.new_label();
  b.branch(header);
  b.begin_block(header);
  PhiRef iv = b.phi(lower.type);
  b.add_incoming(iv, lower, entry);
  set(f.iv(), iv.value);
  std::vector<PhiRef> carried;
  for (size_t k = 0; k < f.inits().size(); ++k) {
    Value init = get(f.inits()[k]);
    carried.push_back(b.phi(init.type));
    b.add_incoming(carried.back(), init, entry);
    set(f.iter_args()[k], carried.back().value);
  }
  // iv < upper for a positive step, iv > upper for a negative one.
  auto more_at = [&](Value at) {
    Value below = b.compare(is_signed ? spv::OpSLessThan : spv::OpULessThan, at, upper);
    Value above = b.compare(is_signed ? spv::OpSGreaterThan : spv::OpUGreaterThan, at, upper);
    if (std::optional<int64_t> k = constant_of(f.step())) return *k > 0 ? below : above;
    return b.select(b.compare(is_signed ? spv::OpSGreaterThan : spv::OpUGreaterThan, step,
                              b.c_int(step.type, 0)),
                    below, above);
  };
  Value more = more_at(iv.value);
  if (loop_counting()) count_iteration();
  b.loop_merge(merge, latch);
  b.branch_cond(more, body, merge);
  b.begin_block(body);
  ++loop_depth_;
  emit_region(*f.body());
  --loop_depth_;
  if (loop_counting())  // the end of a pass: does the loop go on?
    note_loop_limit(op, more_at(b.binary(spv::OpIAdd, iv.value, step)), loop_depth_);
  std::vector<Value> next;
  for (const ir::Value* v : terminator_operands(f.body())) next.push_back(get(v));
  b.branch(latch);
  b.begin_block(latch);
  b.add_incoming(iv, b.binary(spv::OpIAdd, iv.value, step), latch);
  for (size_t k = 0; k < carried.size(); ++k) b.add_incoming(carried[k], next[k], latch);
  b.branch(header);
  b.begin_block(merge);
  for (size_t k = 0; k < carried.size(); ++k) set(op.result(k), carried[k].value);
}

void Emitter::emit_while(const ir::Op& op) {
  ir::WhileOp w(&op);
  uint32_t entry = b.current_label(), header = b.new_label(), before = b.new_label(),
           after = b.new_label(), latch = b.new_label(), merge = b.new_label();
  b.branch(header);
  b.begin_block(header);
  std::vector<PhiRef> carried;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    Value init = get(op.operand(k));
    carried.push_back(b.phi(init.type));
    b.add_incoming(carried.back(), init, entry);
    set(w.before()->args[k], carried.back().value);
  }
  if (loop_counting()) count_iteration();
  b.loop_merge(merge, latch);
  b.branch(before);
  b.begin_block(before);
  ++loop_depth_;
  emit_region(*w.before());
  std::vector<const ir::Value*> cond = terminator_operands(w.before());  // %c, then the values
  std::vector<Value> passed;
  for (size_t k = 1; k < cond.size(); ++k) passed.push_back(get(cond[k]));
  b.branch_cond(get(cond[0]), after, merge);  // a false condition breaks out of the loop
  b.begin_block(after);
  for (size_t k = 0; k < passed.size(); ++k) set(w.after()->args[k], passed[k]);
  emit_region(*w.after());
  --loop_depth_;
  // The end of a pass; whether the loop goes on is known in the next one: assume it does.
  if (loop_counting()) note_loop_limit(op, b.c_bool(true), loop_depth_);
  std::vector<Value> next;
  for (const ir::Value* v : terminator_operands(w.after())) next.push_back(get(v));
  b.branch(latch);
  b.begin_block(latch);
  for (size_t k = 0; k < carried.size(); ++k) b.add_incoming(carried[k], next[k], latch);
  b.branch(header);
  b.begin_block(merge);
  for (size_t k = 0; k < passed.size(); ++k) set(op.result(k), passed[k]);
}

}  // namespace tessera::spirv::impl
