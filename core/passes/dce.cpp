/// \file Dead-code elimination by liveness: mark what the side effects need, sweep the rest.
///
/// A value is live when a live op uses it, or when it flows into a live region value: a live
/// `for` result or iteration argument needs its init and the matching yield operand; a live `if`
/// result needs both yields; a `while` before-argument needs its init and the after-yield, and an
/// after-argument or result needs the matching `condition` operand. An op is live when one of
/// its results is, when it has side effects, or when an op inside one of its regions is live;
/// a live loop or branch needs its bounds or condition.
#include "core/passes/dce.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "core/ir/ops.h"
#include "core/passes/rewrite.h"
#include "core/support/error.h"

namespace tessera::passes {
namespace {

using ir::Op;
using ir::OpKind;
using ir::Region;
using ir::Value;

/// Ops that may go when nothing needs their results. Anything else (stores, atomics, debug ops,
/// `while`, and any future op kind with effects) is a root of the liveness.
bool removable(const Op* op) {
  if (op->kind == OpKind::For || op->kind == OpKind::If) return true;
  if (op->has(ir::kMemWrite) || op->has(ir::kSideEffect)) return false;
  return op->has(ir::kPure) || op->has(ir::kMemRead);
}

/// The terminator of a loop or branch region (which always has one).
Op* terminator_of(const Region* region) {
  Op* t = region->terminator();
  TESSERA_CHECK(t, "a region of '", region->parent->name(), "' has no terminator");
  return t;
}

Value* yielded(const Region* region, size_t i) {
  return terminator_of(region)->operand(i);
}

class Liveness {
 public:
  explicit Liveness(Region* body) {
    ir::walk(body, [&](Op* op) { add_root(op); });
    while (!ops_.empty() || !values_.empty()) {
      if (!values_.empty()) {
        Value* v = values_.back();
        values_.pop_back();
        flow(v);
        continue;
      }
      Op* op = ops_.back();
      ops_.pop_back();
      needs(op);
    }
  }

  bool live(const Op* op) const { return live_ops_.contains(op); }
  bool live(const Value* v) const { return live_values_.contains(v); }

 private:
  void add_root(Op* op) {
    if (op->has(ir::kTerminator)) {
      // A terminator of the function body itself (none today) keeps what it returns.
      if (!op->parent->parent)
        for (Value* v : op->operands) mark(v);
      return;
    }
    if (!removable(op)) mark(op);
  }

  void mark(Op* op) {
    if (live_ops_.insert(op).second) ops_.push_back(op);
  }
  void mark(Value* v) {
    if (live_values_.insert(v).second) values_.push_back(v);
  }

  /// What a live op needs: its enclosing op, and the operands that decide what it does.
  void needs(Op* op) {
    if (op->parent && op->parent->parent) mark(op->parent->parent);
    switch (op->kind) {
      case OpKind::For:
        for (size_t i = 0; i < 3; ++i) mark(op->operand(i));
        return;
      case OpKind::If:
        mark(op->operand(0));
        return;
      case OpKind::While:
        mark(yielded(op->region(0), 0));
        return;
      default:
        break;
    }
    for (Value* v : op->operands) mark(v);
    // Other ops with regions (reduce_generic, scan_generic) need all that their regions yield.
    for (Region* r : op->regions)
      if (r->terminator())
        for (Value* v : r->terminator()->operands) mark(v);
  }

  /// A live value needs its definition, and what flows into it through a region.
  void flow(Value* v) {
    if (v->def) {
      mark(v->def);
      flow_into_result(v->def, v->index);
      return;
    }
    if (v->owner && v->owner->parent) flow_into_arg(v->owner->parent, v->owner, v->index);
  }

  void flow_into_result(Op* op, size_t i) {
    switch (op->kind) {
      case OpKind::For:
        return flow_into_iteration(op, i);
      case OpKind::If:
        mark(yielded(op->region(0), i));
        mark(yielded(op->region(1), i));
        return;
      case OpKind::While:
        mark(yielded(op->region(0), i + 1));
        return;
      default:
        return;
    }
  }

  void flow_into_arg(Op* op, const Region* region, size_t i) {
    if (op->kind == OpKind::For && i > 0) return flow_into_iteration(op, i - 1);
    if (op->kind != OpKind::While) return;
    if (region == op->region(0)) {  // before-argument: init, then what `after` yields
      mark(op->operand(i));
      mark(yielded(op->region(1), i));
      return;
    }
    mark(yielded(op->region(0), i + 1));  // after-argument: what `condition` forwards
  }

  /// Iteration `i` of a live `for` (its result or its argument) needs its init and its yield.
  void flow_into_iteration(Op* op, size_t i) {
    mark(op->operand(3 + i));
    mark(yielded(op->region(0), i));
  }

  std::unordered_set<const Op*> live_ops_;
  std::unordered_set<const Value*> live_values_;
  std::vector<Op*> ops_;
  std::vector<Value*> values_;
};

/// Drops the region values of a live loop or branch that nothing live needs.
class Sweeper {
 public:
  explicit Sweeper(const Liveness& live) : live_(live) {}

  bool sweep(Region* region) {
    std::vector<Op*> kept;
    for (Op* op : region->ops) {
      if (!op->has(ir::kTerminator) && !live_.live(op)) {
        op->parent = nullptr;
        changed_ = true;
        continue;
      }
      kept.push_back(op);
      prune(op);
      for (Region* r : op->regions) sweep(r);
    }
    region->ops = std::move(kept);
    return changed_;
  }

 private:
  void prune(Op* op) {
    if (op->kind == OpKind::For) return prune_for(op);
    if (op->kind == OpKind::If) return prune_if(op);
    if (op->kind == OpKind::While) return prune_while(op);
  }

  /// True (and noted as a change) if some flag of `keep` is false.
  bool any_dead(const std::vector<bool>& keep) {
    if (std::find(keep.begin(), keep.end(), false) == keep.end()) return false;
    changed_ = true;
    return true;
  }

  void prune_for(Op* op) {
    ir::ForOp loop(op);
    std::vector<bool> keep;
    for (size_t i = 0; i < op->results.size(); ++i)
      keep.push_back(live_.live(op->result(i)) || live_.live(loop.iter_args()[i]));
    if (!any_dead(keep)) return;
    filter_results(op, keep);
    filter_terminator(loop.body(), keep, 0);
    keep.insert(keep.begin(), true);  // the induction variable
    filter_args(loop.body(), keep);
    keep.insert(keep.begin(), 2, true);  // lower, upper, step (with the iv's flag)
    filter_operands(op, keep);
  }

  void prune_if(Op* op) {
    std::vector<bool> keep;
    for (Value* r : op->results) keep.push_back(live_.live(r));
    if (!any_dead(keep)) return;
    filter_results(op, keep);
    for (Region* r : op->regions) filter_terminator(r, keep, 0);
  }

  void prune_while(Op* op) {
    ir::WhileOp loop(op);
    std::vector<bool> carried;  // before-arguments, inits and after-yields
    for (Value* a : loop.before()->args) carried.push_back(live_.live(a));
    if (any_dead(carried)) {
      filter_operands(op, carried);
      filter_args(loop.before(), carried);
      filter_terminator(loop.after(), carried, 0);
    }
    std::vector<bool> forwarded;  // results, after-arguments and condition values
    for (size_t i = 0; i < op->results.size(); ++i)
      forwarded.push_back(live_.live(op->result(i)) || live_.live(loop.after()->args[i]));
    if (!any_dead(forwarded)) return;
    filter_results(op, forwarded);
    filter_args(loop.after(), forwarded);
    filter_terminator(loop.before(), forwarded, 1);
  }

  /// Keeps the terminator operands whose flag (after `skip` leading operands) is set.
  static void filter_terminator(Region* region, const std::vector<bool>& keep, size_t skip) {
    std::vector<bool> flags(skip, true);
    flags.insert(flags.end(), keep.begin(), keep.end());
    filter_operands(terminator_of(region), flags);
  }

  const Liveness& live_;
  bool changed_ = false;
};

}  // namespace

bool eliminate_dead_code(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) {
    Liveness live(fn->body);
    changed |= Sweeper(live).sweep(fn->body);
  }
  return changed;
}

}  // namespace tessera::passes
