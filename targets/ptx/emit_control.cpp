/// \file Structured control flow as basic blocks: `for` and `while` become a header block whose
/// phis carry the iteration values, `if` a diamond whose merge block's phis are its results,
/// `warp_specialize` a branch per role on the thread index.
#include "core/ir/attr_names.h"
#include "core/ir/ops.h"
#include "core/support/error.h"
#include "targets/ptx/emitter.h"

namespace tessera::ptx {
namespace {

std::vector<llvm::PHINode*> phis_for(Emitter& e, const std::vector<llvm::Value*>& init,
                                     llvm::BasicBlock* from) {
  std::vector<llvm::PHINode*> phis;
  for (llvm::Value* v : init) {
    llvm::PHINode* phi = e.b.CreatePHI(v->getType(), 2);
    phi->addIncoming(v, from);
    phis.push_back(phi);
  }
  return phis;
}

void add_incoming(std::vector<llvm::PHINode*>& phis, const std::vector<llvm::Value*>& values,
                  llvm::BasicBlock* from) {
  TESSERA_CHECK(phis.size() == values.size(), "a region yields ", values.size(), " values for ",
                phis.size());
  for (size_t i = 0; i < phis.size(); ++i) phis[i]->addIncoming(values[i], from);
}

/// iv from lb while iv < ub (step > 0) or iv > ub (step < 0), in the bounds' signedness.
void emit_for(Emitter& e, const ir::Op& op) {
  ir::ForOp loop(&op);
  auto& b = e.b;
  bool sgn = ir::is_signed_int(loop.lower()->type.dtype);
  llvm::Value* lb = e.get(loop.lower());
  llvm::Value* ub = e.get(loop.upper());
  llvm::Value* step = e.get(loop.step());
  std::vector<llvm::Value*> init{lb};
  for (const ir::Value* v : loop.inits()) init.push_back(e.get(v));

  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* header = e.block("for");
  llvm::BasicBlock* body = e.block("for.body");
  llvm::BasicBlock* exit = e.block("for.end");
  b.CreateBr(header);
  b.SetInsertPoint(header);
  std::vector<llvm::PHINode*> phis = phis_for(e, init, pre);
  llvm::Value* iv = phis[0];
  llvm::Value* up = sgn ? b.CreateICmpSLT(iv, ub) : b.CreateICmpULT(iv, ub);
  llvm::Value* down = sgn ? b.CreateICmpSGT(iv, ub) : b.CreateICmpUGT(iv, ub);
  llvm::Value* positive = sgn ? b.CreateICmpSGT(step, llvm::ConstantInt::get(step->getType(), 0))
                              : b.getTrue();  // an unsigned step is never negative
  b.CreateCondBr(b.CreateSelect(positive, up, down), body, exit);

  b.SetInsertPoint(body);
  e.set(loop.iv(), iv);
  for (size_t i = 0; i < loop.iter_args().size(); ++i) e.set(loop.iter_args()[i], phis[i + 1]);
  std::vector<llvm::Value*> next{b.CreateAdd(iv, step)};
  for (llvm::Value* v : e.emit_region(loop.body())) next.push_back(v);
  add_incoming(phis, next, b.GetInsertBlock());
  b.CreateBr(header);

  b.SetInsertPoint(exit);
  std::vector<llvm::Value*> results(phis.begin() + 1, phis.end());
  e.set_results(op, results);
}

void emit_if(Emitter& e, const ir::Op& op) {
  ir::IfOp branch(&op);
  auto& b = e.b;
  llvm::BasicBlock* then_bb = e.block("then");
  llvm::BasicBlock* else_bb = e.block("else");
  llvm::BasicBlock* merge = e.block("endif");
  b.CreateCondBr(e.get(branch.cond()), then_bb, else_bb);
  b.SetInsertPoint(then_bb);
  std::vector<llvm::Value*> a = e.emit_region(branch.then_region());
  llvm::BasicBlock* then_end = b.GetInsertBlock();
  b.CreateBr(merge);
  b.SetInsertPoint(else_bb);
  std::vector<llvm::Value*> z = e.emit_region(branch.else_region());
  llvm::BasicBlock* else_end = b.GetInsertBlock();
  b.CreateBr(merge);
  b.SetInsertPoint(merge);
  std::vector<llvm::Value*> results;
  for (size_t i = 0; i < op.results.size(); ++i) {
    llvm::PHINode* phi = b.CreatePHI(a.at(i)->getType(), 2);
    phi->addIncoming(a[i], then_end);
    phi->addIncoming(z.at(i), else_end);
    results.push_back(phi);
  }
  e.set_results(op, results);
}

/// before(args) -> condition %c, %v...: if %c, after(%v) yields the next args; else results %v.
void emit_while(Emitter& e, const ir::Op& op) {
  ir::WhileOp loop(&op);
  auto& b = e.b;
  std::vector<llvm::Value*> init;
  for (const ir::Value* v : op.operands) init.push_back(e.get(v));
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* header = e.block("while");
  llvm::BasicBlock* after = e.block("while.body");
  llvm::BasicBlock* exit = e.block("while.end");
  b.CreateBr(header);
  b.SetInsertPoint(header);
  std::vector<llvm::PHINode*> phis = phis_for(e, init, pre);
  for (size_t i = 0; i < phis.size(); ++i) e.set(loop.before()->args.at(i), phis[i]);
  std::vector<llvm::Value*> cond = e.emit_region(loop.before());  // %c, %v...
  TESSERA_CHECK(!cond.empty(), "'while' without a condition");
  b.CreateCondBr(cond[0], after, exit);

  b.SetInsertPoint(after);
  for (size_t i = 1; i < cond.size(); ++i) e.set(loop.after()->args.at(i - 1), cond[i]);
  std::vector<llvm::Value*> next = e.emit_region(loop.after());
  add_incoming(phis, next, b.GetInsertBlock());
  b.CreateBr(header);

  b.SetInsertPoint(exit);  // `before` dominates the exit: its values are the results
  e.set_results(op, std::vector<llvm::Value*>(cond.begin() + 1, cond.end()));
}

/// warp_specialize {roles}: each thread branches to its role's region by its thread index (role
/// k runs threads [first_k, first_k + n_k)); every role ends at one join block.
void emit_warp_specialize(Emitter& e, const ir::Op& op) {
  auto& b = e.b;
  const std::vector<int64_t>& roles = op.ints_attr(attr::kRoles);
  TESSERA_CHECK(roles.size() == op.regions.size(), "warp_specialize with ", op.regions.size(),
                " regions and ", roles.size(), " roles");
  llvm::Value* tid = e.intrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {}, {});
  llvm::BasicBlock* join = e.block("roles.end");
  int64_t end = 0;
  for (size_t k = 0; k < roles.size(); ++k) {
    end += roles[k];
    llvm::BasicBlock* role = e.block("role");
    if (k + 1 < roles.size()) {
      llvm::BasicBlock* next = e.block("roles.next");
      b.CreateCondBr(b.CreateICmpULT(tid, b.getInt32(static_cast<uint32_t>(end))), role, next);
      b.SetInsertPoint(role);
      e.emit_region(op.region(k));
      b.CreateBr(join);
      b.SetInsertPoint(next);
    } else {  // the last role: every thread past the others'
      b.CreateBr(role);
      b.SetInsertPoint(role);
      e.emit_region(op.region(k));
      b.CreateBr(join);
    }
  }
  b.SetInsertPoint(join);
}

}  // namespace

void emit_control(Emitter& e, const ir::Op& op) {
  switch (op.kind) {
    case ir::OpKind::For:
      return emit_for(e, op);
    case ir::OpKind::If:
      return emit_if(e, op);
    case ir::OpKind::While:
      return emit_while(e, op);
    case ir::OpKind::WarpSpecialize:
      return emit_warp_specialize(e, op);
    default:
      TESSERA_CHECK(false, "not control flow: ", op.name());
  }
}

}  // namespace tessera::ptx
