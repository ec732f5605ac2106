/// \file Remainder versioning (rem_version.h): the kernel's tail copied with its `%`s marked
/// non-negative, behind a test computed from their left sides' affine forms.
#include "core/passes/rem_version.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ir/builder.h"
#include "core/ir/ops.h"
#include "core/lower/axis_info.h"
#include "core/passes/affine.h"
#include "core/passes/rewrite.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

/// Every (user op, operand index) of each value of `fn`.
using Uses = std::unordered_map<const Value*, std::vector<std::pair<Op*, size_t>>>;

Uses collect_uses(const ir::Function& fn) {
  Uses uses;
  ir::walk(fn.body, [&](Op* op) {
    for (size_t i = 0; i < op->operands.size(); ++i) uses[op->operands[i]].emplace_back(op, i);
  });
  return uses;
}

/// Does `v` flow (through any computation, loop-carried values and branch results) into the
/// address of a memory access?
bool reaches_address(const Value* v, const Uses& uses) {
  std::vector<const Value*> work{v};
  std::unordered_set<const Value*> seen{v};
  auto push = [&](const Value* x) {
    if (seen.insert(x).second) work.push_back(x);
  };
  while (!work.empty()) {
    const Value* x = work.back();
    work.pop_back();
    auto it = uses.find(x);
    if (it == uses.end()) continue;
    for (const auto& [op, i] : it->second) {
      switch (op->kind) {
        case OpKind::Load:
        case OpKind::Store:
        case OpKind::AtomicRmw:
        case OpKind::AtomicCas:
          if (i == 0) return true;
          break;
        case OpKind::For: {
          const ir::ForOp f(op);
          if (i < 3) break;  // bounds and step
          push(f.iter_args()[i - 3]);
          push(op->results[i - 3]);
          break;
        }
        case OpKind::Yield: {
          const Op* parent = op->parent ? op->parent->parent : nullptr;
          if (!parent) break;
          if (i < parent->results.size()) push(parent->results[i]);
          if (parent->kind == OpKind::For) push(ir::ForOp(parent).iter_args()[i]);
          break;
        }
        default:
          for (const Value* r : op->results) push(r);
          for (const ir::Region* r : op->regions)
            for (const Value* a : r->args) push(a);
          break;
      }
    }
  }
  return false;
}

/// Would the `nonneg` fact give `rem` runs (core/lower/axis_info.cpp's rule)?
bool fact_keeps_runs(const Op& rem, const lower::AxisInfoMap& info) {
  const lower::AxisInfo& a = info.get(rem.operand(0));
  const lower::AxisInfo& b = info.get(rem.operand(1));
  for (size_t d = 0; d < a.contiguity.size(); ++d)
    if (std::min({a.contiguity[d], a.divisibility[d], b.divisibility[d], b.constancy[d]}) > 1)
      return true;
  return false;
}

/// A top-level `rem` the policy selects (before its affine form is asked for).
bool candidate(const Op& op, const lower::AxisInfoMap& info, const Uses& uses) {
  if (op.kind != OpKind::Rem || !op.result()->type.is_tile()) return false;
  if (op.result()->type.dtype != DType::i32 || op.result()->type.is_ptr) return false;
  if (op.int_attr_or(lower::kNonnegAttr, 0) != 0 || lower::provably_nonneg(op.operand(0)))
    return false;
  return fact_keeps_runs(op, info) && reaches_address(op.result(), uses);
}

/// The test that every element of each form lies in [0, INT32_MAX], built with `b`.
Value* build_test(ir::Builder& b, const std::vector<Affine>& forms) {
  TestBuilder test(b);
  for (const Affine& a : forms) test.in_range(a, 0, std::numeric_limits<int32_t>::max());
  return test.result();
}

/// Rewrites `fn`'s body from top-level op `split` to its end into `if (every form's elements in
/// [0, INT32_MAX]) { a copy } else { as written }`; returns the map from the tail's values to
/// the copy's.
std::unordered_map<const Value*, Value*> split_tail(ir::Module& m, ir::Function& fn, size_t split,
                                                    const std::vector<Affine>& forms) {
  return version_tail(m, fn, split, [&](ir::Builder& b) { return build_test(b, forms); });
}

bool version_function(ir::Module& m, ir::Function& fn) {
  ir::Region* body = fn.body;
  const lower::AxisInfoMap info(fn);
  const Uses uses = collect_uses(fn);
  std::vector<size_t> picked;
  for (size_t i = 0; i < body->ops.size(); ++i)
    if (candidate(*body->ops[i], info, uses)) picked.push_back(i);
  if (picked.empty()) return false;
  const size_t split = picked.front();
  const AffineAnalysis analysis(fn, split);
  std::vector<Affine> forms;
  std::vector<const Op*> versioned;
  for (size_t i : picked) {
    std::optional<Affine> form = analysis.affine(body->ops[i]->operand(0));
    if (!form || !form->bounded()) continue;  // left as written (no fact)
    forms.push_back(std::move(*form));
    versioned.push_back(body->ops[i]);
  }
  if (versioned.empty()) return false;
  // `then`'s versioned remainders carry the fact.
  const std::unordered_map<const Value*, Value*> map = split_tail(m, fn, split, forms);
  for (const Op* op : versioned)
    map.at(op->result())->def->set_attr(lower::kNonnegAttr, int64_t{1});
  return true;
}

}  // namespace

std::optional<std::unordered_map<const ir::Value*, ir::Value*>> version_nonneg(
    ir::Module& m, ir::Function& fn, size_t split, const std::vector<ir::Value*>& values) {
  const AffineAnalysis analysis(fn, split);
  std::vector<Affine> forms;
  for (Value* v : values) {
    std::optional<Affine> form = analysis.affine(v);
    if (!form || !form->bounded()) return std::nullopt;
    forms.push_back(std::move(*form));
  }
  if (forms.empty()) return std::nullopt;
  return split_tail(m, fn, split, forms);
}

bool version_remainders(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) changed |= version_function(m, *fn);
  return changed;
}

}  // namespace tessera::passes
