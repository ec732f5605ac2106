/// \file for, if and while: tile-valued loop-carried values and branch results become one SIMT
/// value per register of their home layout.
#include "core/ir/ops.h"
#include "core/lower/lowerer.h"

namespace tessera::lower::detail {
namespace {

using ir::OpKind;
using ir::Type;

/// The SIMT types a tile-IR value occupies: one per register of its home, or one scalar.
std::vector<Type> flat_types(const Lowerer& lw, const ir::Value* v) {
  if (!v->type.is_tile()) return {v->type};
  const Layout& l = lw.homes().home(v);
  return std::vector<Type>(static_cast<size_t>(l.num_regs()), lw.register_type(v->type, l));
}

}  // namespace

/// Flattens `v` for passing where the tile-IR value `slot` is expected (its home layout).
static std::vector<ir::Value*> flatten(Lowerer& lw, const ir::Value* v, const ir::Value* slot) {
  if (!slot->type.is_tile()) return {lw.scalar(v)};
  return lw.regs(v, lw.homes().home(slot));
}

/// Binds the SIMT values args[pos..] to the tile-IR values `slots`, advancing pos.
static void bind_values(Lowerer& lw, const std::vector<ir::Value*>& args, size_t& pos,
                        std::span<ir::Value* const> slots) {
  for (const ir::Value* s : slots) {
    if (!s->type.is_tile()) {
      lw.define_scalar(s, args[pos++]);
      continue;
    }
    const Layout& l = lw.homes().home(s);
    Regs r(args.begin() + static_cast<long>(pos),
           args.begin() + static_cast<long>(pos) + l.num_regs());
    pos += static_cast<size_t>(l.num_regs());
    lw.define_tile(s, l, r);
  }
}

void Lowerer::lower_for(const ir::Op& op) {
  const LoopPlan& plan = plan_.loop(op);
  switch (plan.kind) {
    case LoopKind::Plain:
      return emit_for(op, nullptr);
    case LoopKind::CpAsyncRing:
    case LoopKind::RegisterRing:
    case LoopKind::WarpSpecialized:
      return lower_ring_loop(op, plan);
  }
}

void Lowerer::emit_for(const ir::Op& op, LoopExtension* ext) {
  ir::ForOp f(&op);
  std::vector<ir::Value*> operands = {scalar(f.lower()), scalar(f.upper()), scalar(f.step())};
  std::vector<Type> types;
  for (size_t i = 0; i < f.inits().size(); ++i) {
    const ir::Value* arg = f.iter_args()[i];
    for (ir::Value* v : flatten(*this, f.inits()[i], arg)) operands.push_back(v);
    for (const Type& t : flat_types(*this, arg)) types.push_back(t);
  }
  // The extension's values are carried after the tile-IR loop's.
  const size_t carried = types.size();
  if (ext) {
    for (ir::Value* v : ext->before(operands[0], operands[1], operands[2])) {
      operands.push_back(v);
      types.push_back(v->type);
    }
  }
  ir::Op* loop = b().create(OpKind::For, operands, types);
  ir::Region* body = b().add_region(loop);
  out_module().add_arg(body, operands[0]->type);
  for (const Type& t : types) out_module().add_arg(body, t);
  push_scope(body, loop);
  define_scalar(f.iv(), body->args[0]);
  size_t pos = 1;
  bind_values(*this, body->args, pos, f.iter_args());
  if (ext)
    ext->enter(body->args[0],
               std::vector<ir::Value*>(body->args.begin() + 1 + static_cast<long>(carried),
                                       body->args.end()));
  lower_region(*f.body(), body);
  const ir::Op* y = f.body()->terminator();
  b().set_loc(y->loc);
  std::vector<ir::Value*> yields;
  for (size_t i = 0; i < y->operands.size(); ++i)
    for (ir::Value* v : flatten(*this, y->operand(i), f.iter_args()[i])) yields.push_back(v);
  if (ext)
    for (ir::Value* v : ext->next()) yields.push_back(v);
  b().create(OpKind::Yield, yields, {});
  pop_scope();
  pos = 0;
  std::vector<ir::Value*> results(loop->results.begin(), loop->results.end());
  bind_values(*this, results, pos, op.results);
  if (ext) ext->after();
}

void Lowerer::lower_if(const ir::Op& op) {
  ir::IfOp f(&op);
  std::vector<Type> types;
  for (const ir::Value* r : op.results)
    for (const Type& t : flat_types(*this, r)) types.push_back(t);
  ir::Op* branch = b().create(OpKind::If, {scalar(f.cond())}, types);
  for (const ir::Region* src : {f.then_region(), f.else_region()}) {
    ir::Region* dst = b().add_region(branch);
    push_scope(dst, branch);
    lower_region(*src, dst);
    const ir::Op* y = src->terminator();
    b().set_loc(y->loc);
    std::vector<ir::Value*> yields;
    for (size_t i = 0; i < y->operands.size(); ++i)
      for (ir::Value* v : flatten(*this, y->operand(i), op.results[i])) yields.push_back(v);
    b().create(OpKind::Yield, yields, {});
    pop_scope();
  }
  size_t pos = 0;
  std::vector<ir::Value*> results(branch->results.begin(), branch->results.end());
  bind_values(*this, results, pos, op.results);
}

void Lowerer::lower_while(const ir::Op& op) {
  ir::WhileOp w(&op);
  const ir::Region* before = w.before();
  const ir::Region* after = w.after();
  std::vector<ir::Value*> inits;
  std::vector<Type> carried, result_types;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    for (ir::Value* v : flatten(*this, op.operand(i), before->args[i])) inits.push_back(v);
    for (const Type& t : flat_types(*this, before->args[i])) carried.push_back(t);
  }
  for (const ir::Value* r : op.results)
    for (const Type& t : flat_types(*this, r)) result_types.push_back(t);
  ir::Op* loop = b().create(OpKind::While, inits, result_types);
  ir::Region* dst_before = b().add_region(loop);
  ir::Region* dst_after = b().add_region(loop);
  for (const Type& t : carried) out_module().add_arg(dst_before, t);
  for (const Type& t : result_types) out_module().add_arg(dst_after, t);

  push_scope(dst_before, loop);
  size_t pos = 0;
  bind_values(*this, dst_before->args, pos, before->args);
  lower_region(*before, dst_before);
  const ir::Op* cond = before->terminator();
  b().set_loc(cond->loc);
  std::vector<ir::Value*> cond_operands = {scalar(cond->operand(0))};
  for (size_t i = 1; i < cond->operands.size(); ++i)
    for (ir::Value* v : flatten(*this, cond->operand(i), op.results[i - 1]))
      cond_operands.push_back(v);
  b().create(OpKind::Condition, cond_operands, {});
  pop_scope();

  push_scope(dst_after, loop);
  pos = 0;
  bind_values(*this, dst_after->args, pos, after->args);
  lower_region(*after, dst_after);
  const ir::Op* y = after->terminator();
  b().set_loc(y->loc);
  std::vector<ir::Value*> yields;
  for (size_t i = 0; i < y->operands.size(); ++i)
    for (ir::Value* v : flatten(*this, y->operand(i), before->args[i])) yields.push_back(v);
  b().create(OpKind::Yield, yields, {});
  pop_scope();

  pos = 0;
  std::vector<ir::Value*> results(loop->results.begin(), loop->results.end());
  bind_values(*this, results, pos, op.results);
}

}  // namespace tessera::lower::detail
