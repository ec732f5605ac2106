/// \file Single-trip versioning (single_trip.h): the kernel's tail copied with its repeated loops
/// opened, behind a test of their trip count and of the memory the stores between them write.
#include "core/passes/single_trip.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/ir/attr_names.h"
#include "core/ir/ops.h"
#include "core/passes/affine.h"
#include "core/passes/rewrite.h"
#include "core/support/error.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Value;

/// A top-level `for` the policy looks at: signed 32-bit bounds, the upper one not a constant, a
/// positive constant step.
bool candidate_loop(const Op& op) {
  if (op.kind != OpKind::For) return false;
  const ir::ForOp f(&op);
  if (f.lower()->type.dtype != DType::i32 || f.upper()->type.dtype != DType::i32) return false;
  const std::optional<Scalar> step = constant_value(f.step());
  return step && !step->is_float() && step->i > 0 && !is_constant(f.upper());
}

/// The tile loads anywhere in `op`.
std::vector<Op*> loads_in(Op* op) {
  std::vector<Op*> out;
  for (ir::Region* r : op->regions)
    ir::walk(r, [&](Op* inner) {
      if (inner->kind == OpKind::Load) out.push_back(inner);
    });
  return out;
}

/// A store between the loops, with its addresses.
struct Write {
  Op* store;
  Address address;
  int64_t bytes;
};

/// One group of loops, as the policy reads it.
struct Plan {
  std::vector<size_t> loops;                          ///< top-level indices, ascending
  std::vector<Op*> repeated_loads;                    ///< loads whose form occurs in two loops
  std::vector<std::pair<Address, int64_t>> repeated;  ///< their distinct forms, bytes an element
  std::vector<Write> writes;                          ///< the stores between the loops
  bool tag = false;  ///< every write has a form: loads merge across them
};

/// Reads group `loops` (same bounds, ascending) of `fn`; none where no load form repeats.
std::optional<Plan> read_group(const ir::Function& fn, const std::vector<size_t>& loops) {
  const std::vector<Op*>& ops = fn.body->ops;
  AffineAnalysis analysis(fn, loops.front());
  for (size_t i : loops) {
    const ir::ForOp f(ops[i]);
    analysis.substitute(f.iv(), f.lower());
  }
  Plan plan;
  plan.loops = loops;
  // Each load's form, and in which loops each form occurs.
  std::vector<std::tuple<Op*, Address, size_t>> loads;
  for (size_t k = 0; k < loops.size(); ++k)
    for (Op* load : loads_in(ops[loops[k]]))
      if (std::optional<Address> a = analysis.address(load->operand(0)))
        loads.emplace_back(load, std::move(*a), k);
  for (const auto& [load, form, k] : loads) {
    const bool repeats = std::any_of(loads.begin(), loads.end(), [&](const auto& other) {
      return std::get<2>(other) != k && std::get<1>(other) == form;
    });
    if (!repeats) continue;
    plan.repeated_loads.push_back(load);
    if (std::none_of(plan.repeated.begin(), plan.repeated.end(),
                     [&](const auto& r) { return r.first == form; }))
      plan.repeated.emplace_back(form, ir::dtype_bytes(load->result()->type.dtype));
  }
  if (plan.repeated_loads.empty()) return std::nullopt;
  // What runs between the loops, outside them.
  plan.tag = true;
  for (size_t i = loops.front() + 1; i < loops.back(); ++i) {
    if (std::find(loops.begin(), loops.end(), i) != loops.end()) continue;
    auto visit = [&](Op* op) {
      if (op->kind == OpKind::Store) {
        std::optional<Address> a = analysis.address(op->operand(0));
        if (a && TestBuilder::testable(*a)) {
          plan.writes.push_back({op, std::move(*a), ir::dtype_bytes(op->operand(1)->type.dtype)});
          return;
        }
      }
      if (op->has(ir::kMemWrite) || op->has(ir::kSideEffect)) plan.tag = false;
    };
    visit(ops[i]);
    for (ir::Region* r : ops[i]->regions) ir::walk(r, visit);
  }
  for (const auto& [form, bytes] : plan.repeated)
    if (!TestBuilder::testable(form)) plan.tag = false;
  if (!plan.tag) plan.writes.clear();
  return plan;
}

/// The groups of candidate loops with equal bounds, in the order of their first loops.
std::vector<std::vector<size_t>> loop_groups(const ir::Function& fn) {
  std::map<std::tuple<const Value*, const Value*, const Value*>, size_t> index;
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < fn.body->ops.size(); ++i) {
    const Op* op = fn.body->ops[i];
    if (!candidate_loop(*op)) continue;
    const ir::ForOp f(op);
    auto [it, fresh] = index.try_emplace({f.lower(), f.upper(), f.step()}, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  std::erase_if(groups, [](const auto& g) { return g.size() < 2; });
  return groups;
}

/// Replaces loop `op` (in its region) by its body run once: the induction variable is the lower
/// bound, the carried values their initial values, the results what the body yields.
void open_loop(Op* op) {
  const ir::ForOp f(op);
  ir::Region* body = f.body();
  replace_uses(op, f.iv(), f.lower());
  for (size_t i = 0; i < f.iter_args().size(); ++i)
    replace_uses(op, f.iter_args()[i], f.inits()[i]);
  Op* yield = body->terminator();
  const std::vector<Value*> yielded = yield->operands;
  ir::Region* parent = op->parent;
  auto at = std::find(parent->ops.begin(), parent->ops.end(), op);
  std::vector<Op*> moved(body->ops.begin(), body->ops.end() - 1);
  for (Op* inner : moved) inner->parent = parent;
  parent->ops.insert(at, moved.begin(), moved.end());
  body->ops.erase(body->ops.begin(), body->ops.end() - 1);
  for (size_t i = 0; i < op->results.size(); ++i) replace_uses(op, op->results[i], yielded[i]);
  erase_op(op);
}

/// The largest disjoint group number in `fn` plus one.
int64_t next_group(ir::Function& fn) {
  int64_t most = 0;
  ir::walk(fn.body,
           [&](const Op* op) { most = std::max(most, op->int_attr_or(attr::kDisjoint, 0)); });
  return most + 1;
}

bool version_function(ir::Module& m, ir::Function& fn) {
  for (const std::vector<size_t>& group : loop_groups(fn)) {
    std::optional<Plan> plan = read_group(fn, group);
    if (!plan) continue;
    const size_t split = group.front();
    const ir::ForOp first(fn.body->ops[split]);
    std::vector<Op*> loops;
    for (size_t i : group) loops.push_back(fn.body->ops[i]);
    // The copy is made of tagged ops; the originals (the `else` side) lose the tags after.
    const int64_t g = next_group(fn);
    std::vector<Op*> tagged;
    if (!plan->writes.empty()) {
      for (const Write& w : plan->writes) tagged.push_back(w.store);
      tagged.insert(tagged.end(), plan->repeated_loads.begin(), plan->repeated_loads.end());
    }
    for (Op* op : tagged) op->set_attr(attr::kDisjoint, g);
    const std::unordered_map<const Value*, Value*> map =
        version_tail(m, fn, split, [&](ir::Builder& b) {
          TestBuilder test(b);
          Affine trip = Affine::scalar(first.upper());
          if (std::optional<Scalar> lo = constant_value(first.lower()))
            trip.add(Affine::range(lo->i, lo->i), -1);
          else
            trip.add(Affine::scalar(first.lower()), -1);
          test.in_range(trip, 1, constant_value(first.step())->i);  // lo < hi <= lo + step
          for (const Write& w : plan->writes)
            for (const auto& [form, bytes] : plan->repeated)
              TESSERA_CHECK(test.disjoint(w.address, w.bytes, form, bytes),
                            "single-trip: an address the plan found testable is not");
          return test.result();
        });
    for (Op* op : tagged) op->erase_attr(attr::kDisjoint);
    for (Op* loop : loops) open_loop(map.at(ir::ForOp(loop).iv())->owner->parent);
    return true;
  }
  return false;
}

}  // namespace

bool version_single_trips(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) changed |= version_function(m, *fn);
  return changed;
}

}  // namespace tessera::passes
