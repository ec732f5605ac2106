/// \file Shrinking a failing fuzz program: regenerate it with smaller shapes, then delete ops
/// one at a time (replacing their results by an operand of the same type or a constant) while
/// the program still fails and still verifies.
#include <algorithm>
#include <set>

#include "core/ir/builder.h"
#include "core/ir/verifier.h"
#include "tools/fuzz_run.h"

namespace tessera::tools::fuzz {
namespace {

constexpr int kMaxRuns = 400;  ///< budget of check() calls for one shrink

/// Every op of every region, pre-order, terminators excluded.
std::vector<ir::Op*> all_ops(const ir::Module& m) {
  std::vector<ir::Op*> ops;
  ir::walk(m.kernel().body, [&](ir::Op* op) {
    if (!op->has(ir::kTerminator)) ops.push_back(op);
  });
  return ops;
}

void erase(ir::Op* op) {
  auto& ops = op->parent->ops;
  ops.erase(std::find(ops.begin(), ops.end(), op));
}

/// Does `op` (or an op in its regions) write memory or have another side effect?
bool has_effects(ir::Op* op) {
  bool effects = false;
  auto check = [&](ir::Op* o) {
    effects = effects || o->has(ir::kMemWrite) || o->has(ir::kSideEffect);
  };
  check(op);
  for (ir::Region* r : op->regions) ir::walk(r, check);
  return effects;
}

/// Removes ops without side effects whose results are unused, until none is left.
void remove_dead(ir::Module& m) {
  for (bool changed = true; changed;) {
    changed = false;
    std::set<ir::Value*> used;
    ir::walk(m.kernel().body,
             [&](ir::Op* op) { used.insert(op->operands.begin(), op->operands.end()); });
    std::vector<ir::Op*> ops = all_ops(m);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      ir::Op* op = *it;
      const bool effect_free =
          op->has(ir::kPure) || op->kind == ir::OpKind::Load || !has_effects(op);
      if (!effect_free || op->results.empty()) continue;
      if (std::any_of(op->results.begin(), op->results.end(),
                      [&](ir::Value* r) { return used.count(r); }))
        continue;
      erase(op);
      changed = true;
    }
  }
}

/// Is `op` inside the regions of `ancestor`?
bool inside(const ir::Op* op, const ir::Op* ancestor) {
  for (const ir::Region* r = op->parent; r && r->parent; r = r->parent->parent)
    if (r->parent == ancestor) return true;
  return false;
}

/// Adds the backward slice of `v` (the ops computing it, within `scope` if given) to `out`.
void slice(ir::Value* v, const ir::Op* scope, std::set<const ir::Op*>& out) {
  std::vector<ir::Value*> work = {v};
  while (!work.empty()) {
    ir::Value* w = work.back();
    work.pop_back();
    if (!w->def || (scope && !inside(w->def, scope)) || !out.insert(w->def).second) continue;
    work.insert(work.end(), w->def->operands.begin(), w->def->operands.end());
  }
}

/// Ops that must stay for the reduced program to stay meaningful: the slices (within the loop)
/// of every `while`'s condition and counter, which keep it finite, and the address computations
/// of every store, whose lanes must keep distinct addresses (lanes storing to one address
/// leave an unspecified value there).
std::set<const ir::Op*> protected_ops(const ir::Module& m) {
  std::set<const ir::Op*> keep;
  ir::walk(m.kernel().body, [&](ir::Op* op) {
    if (op->kind == ir::OpKind::Store) slice(op->operand(0), nullptr, keep);
    if (op->kind != ir::OpKind::While) return;
    slice(op->region(0)->terminator()->operand(0), op, keep);
    slice(op->region(1)->terminator()->operand(0), op, keep);
  });
  return keep;
}

int count_stores(const ir::Module& m) {
  int n = 0;
  ir::walk(m.kernel().body, [&](ir::Op* op) { n += op->kind == ir::OpKind::Store; });
  return n;
}

/// Deletes `op`: its results are replaced by a same-typed operand (for loop-carried values, the
/// matching initial value) or a zero constant. False if that is impossible.
bool delete_op(ir::Module& m, ir::Op* op) {
  if (op->kind == ir::OpKind::Store) {
    if (count_stores(m) <= 1) return false;
    erase(op);
    return true;
  }
  ir::Builder b(m);
  b.set_insertion_before(op);
  b.set_loc(op->loc);
  for (size_t i = 0; i < op->results.size(); ++i) {
    ir::Value* r = op->result(i);
    ir::Value* repl = nullptr;
    const size_t init = op->kind == ir::OpKind::For ? 3 + i : i;
    if ((op->kind == ir::OpKind::For || op->kind == ir::OpKind::While) &&
        init < op->operands.size() && op->operand(init)->type == r->type)
      repl = op->operand(init);
    for (ir::Value* v : op->operands)
      if (!repl && v->type == r->type) repl = v;
    if (!repl && r->type.is_ptr) return false;
    if (!repl) repl = b.constant(r->type, 0);
    ir::replace_all_uses(op->parent, r, repl);
  }
  erase(op);
  return true;
}

}  // namespace

int count_ops(const ir::Module& m) {
  return static_cast<int>(all_ops(m).size());
}

namespace {

/// The same choices with every dimension halved, while it still fails.
void shrink_shapes(const Checker& check, uint64_t seed, const GenOptions& options, bool exact,
                   const Verdict& failure, Reduced& r, int& runs) {
  for (int shift = options.shape_shift + 1; shift <= 8 && runs < kMaxRuns; ++shift) {
    GenOptions o = options;
    o.shape_shift = shift;
    Program q = generate(seed, o);
    Buffers in = make_buffers(q, seed, exact);
    ++runs;
    if (!check(*q.module, q, in).same_failure(failure)) break;
    r.program = std::move(q);
    r.inputs = std::move(in);
  }
}

/// One program instead of a grid (fewer programs, and no order between them to depend on).
void shrink_grid(const Checker& check, const Verdict& failure, Reduced& r, int& runs) {
  if (r.program.grid == 1) return;
  const uint32_t grid = r.program.grid;
  r.program.grid = 1;
  ++runs;
  if (!check(*r.program.module, r.program, r.inputs).same_failure(failure)) r.program.grid = grid;
}

/// Deletes ops one at a time (latest first), starting over after every success.
void shrink_ops(const Checker& check, const Verdict& failure, Reduced& r, int& runs) {
  for (bool progress = true; progress && runs < kMaxRuns;) {
    progress = false;
    for (int idx = count_ops(*r.program.module) - 1; idx >= 0 && runs < kMaxRuns; --idx) {
      std::unique_ptr<ir::Module> candidate = r.program.module->clone();
      ir::Op* victim = all_ops(*candidate)[idx];
      if (protected_ops(*candidate).count(victim) || !delete_op(*candidate, victim)) continue;
      remove_dead(*candidate);
      if (!ir::verify_all(*candidate).empty()) continue;
      ++runs;
      if (!check(*candidate, r.program, r.inputs).same_failure(failure)) continue;
      r.program.module = std::move(candidate);  // earlier ops keep their indices (or fewer remain)
      idx = std::min(idx, count_ops(*r.program.module));
      progress = true;
    }
  }
}

}  // namespace

Reduced shrink(const Checker& check, uint64_t seed, const GenOptions& options, Program p,
               Buffers inputs, bool exact, const Verdict& failure) {
  Reduced r{std::move(p), std::move(inputs), 0, 0};
  r.ops_before = count_ops(*r.program.module);
  int runs = 0;
  shrink_shapes(check, seed, options, exact, failure, r, runs);
  shrink_grid(check, failure, r, runs);
  shrink_ops(check, failure, r, runs);
  r.ops_after = count_ops(*r.program.module);
  return r;
}

}  // namespace tessera::tools::fuzz
