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
#include "core/passes/rewrite.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

/// Coefficients and ranges past these are not analysed, so that every sum the test builds stays
/// exact in 64 bits (32-bit scalars times at most 2^24, a few of them, plus ranges of 2^40).
constexpr int64_t kMaxCoefficient = int64_t{1} << 24;
constexpr int64_t kMaxRange = int64_t{1} << 40;
constexpr size_t kMaxTerms = 16;
constexpr int kMaxDepth = 64;

/// An integer value, element by element, as sum_i coeff_i * scalar_i + an offset in [lo, hi]:
/// the scalars are uniform (one value for the whole tile), the offset is what index tiles add.
struct Affine {
  std::vector<std::pair<Value*, int64_t>> terms;
  int64_t lo = 0, hi = 0;

  static Affine scalar(Value* v) { return Affine{{{v, 1}}, 0, 0}; }
  static Affine range(int64_t lo, int64_t hi) { return Affine{{}, lo, hi}; }

  bool is_constant() const { return terms.empty() && lo == hi; }
  bool bounded() const {
    if (terms.size() > kMaxTerms) return false;
    for (const auto& t : terms)
      if (t.second > kMaxCoefficient || t.second < -kMaxCoefficient) return false;
    return lo >= -kMaxRange && hi <= kMaxRange;
  }
  /// this += sign * o (both bounded, so nothing overflows).
  void add(const Affine& o, int64_t sign) {
    for (const auto& [v, c] : o.terms) {
      auto it =
          std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.first == v; });
      if (it == terms.end())
        terms.emplace_back(v, sign * c);
      else
        it->second += sign * c;
    }
    std::erase_if(terms, [](const auto& t) { return t.second == 0; });
    const int64_t olo = o.lo, ohi = o.hi;
    lo += sign > 0 ? olo : -ohi;
    hi += sign > 0 ? ohi : -olo;
  }
  /// this *= c (|c| <= kMaxCoefficient, this bounded); false (this unusable) where a product
  /// leaves 64 bits.
  bool scale(int64_t c) {
    for (auto& t : terms) t.second *= c;  // at most 2^48
    std::erase_if(terms, [](const auto& t) { return t.second == 0; });
    const int64_t most = std::max(lo < 0 ? -lo : lo, hi < 0 ? -hi : hi);  // lo, hi >= -2^40
    if (c != 0 && most > std::numeric_limits<int64_t>::max() / (c < 0 ? -c : c)) return false;
    lo *= c;
    hi *= c;
    if (c < 0) std::swap(lo, hi);
    return true;
  }
};

/// One function's analysis: which top-level ops come before the split, and the affine forms.
class Analysis {
 public:
  Analysis(const ir::Function& fn, size_t split) : fn_(fn) {
    for (size_t i = 0; i < split; ++i) before_.insert(fn.body->ops[i]);
  }

  /// `v` (signed 32-bit) as an affine form over scalars available before the split, or none.
  std::optional<Affine> affine(Value* v, int depth = 0) const {
    if (depth > kMaxDepth || v->type.dtype != DType::i32 || v->type.is_ptr) return std::nullopt;
    if (auto c = constant_value(v); c && !c->is_float()) return Affine::range(c->i, c->i);
    if (!v->type.is_tile() && available(v)) return Affine::scalar(v);
    const Op* op = v->def;
    if (!op) return std::nullopt;
    switch (op->kind) {
      case OpKind::Arange: {
        const ir::ArangeOp a(op);
        if (a.end() <= a.start()) return std::nullopt;
        return Affine::range(a.start(), a.end() - 1);
      }
      case OpKind::Splat:
      case OpKind::Broadcast:
      case OpKind::ExpandDims:
      case OpKind::Reshape:
      case OpKind::Permute:
      case OpKind::MultipleOf:
      case OpKind::MaxContiguous:
        return affine(op->operand(0), depth + 1);
      case OpKind::Add:
      case OpKind::Sub: {
        std::optional<Affine> a = affine(op->operand(0), depth + 1);
        std::optional<Affine> b = a ? affine(op->operand(1), depth + 1) : std::nullopt;
        if (!b || !a->bounded() || !b->bounded()) return std::nullopt;
        a->add(*b, op->kind == OpKind::Add ? 1 : -1);
        return a;
      }
      case OpKind::Mul: {
        std::optional<Affine> a = affine(op->operand(0), depth + 1);
        std::optional<Affine> b = a ? affine(op->operand(1), depth + 1) : std::nullopt;
        if (!b) return std::nullopt;
        if (!a->is_constant()) std::swap(a, b);
        if (!a->is_constant() || a->lo > kMaxCoefficient || a->lo < -kMaxCoefficient ||
            !b->bounded())
          return std::nullopt;
        if (!b->scale(a->lo)) return std::nullopt;
        return b;
      }
      default:
        return std::nullopt;
    }
  }

 private:
  /// A scalar the test can read before the split: a parameter or a top-level op's result there.
  bool available(const Value* v) const {
    if (v->is_arg())
      return std::any_of(fn_.params.begin(), fn_.params.end(),
                         [&](const ir::Param& p) { return p.value == v; });
    return before_.count(v->def) != 0;
  }

  const ir::Function& fn_;
  std::unordered_set<const Op*> before_;
};

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

/// Copies `op` (with its regions) as a new op in no region yet: operands found in `map` become
/// their copies, the others stay; the copy's results and region arguments enter `map`.
Op* clone(ir::Module& m, const Op& op, std::unordered_map<const Value*, Value*>& map) {
  std::vector<Value*> operands;
  operands.reserve(op.operands.size());
  for (Value* v : op.operands) {
    auto it = map.find(v);
    operands.push_back(it == map.end() ? v : it->second);
  }
  std::vector<Type> types;
  for (const Value* r : op.results) types.push_back(r->type);
  Op* copy = m.new_op(op.kind, std::move(operands), std::move(types), op.attrs, op.loc);
  for (size_t i = 0; i < op.results.size(); ++i) map[op.results[i]] = copy->results[i];
  for (const ir::Region* r : op.regions) {
    ir::Region* nr = m.new_region(copy);
    copy->regions.push_back(nr);
    for (Value* a : r->args) map[a] = m.add_arg(nr, a->type);
    for (const Op* inner : r->ops) {
      Op* c = clone(m, *inner, map);
      c->parent = nr;
      nr->ops.push_back(c);
    }
  }
  return copy;
}

/// The test that every element of each form lies in [0, INT32_MAX], built before `at`.
Value* build_test(ir::Builder& b, const std::vector<Affine>& forms) {
  const Type i64 = Type::scalar(DType::i64), i1 = Type::scalar(DType::i1);
  auto constant = [&](int64_t x) { return b.constant_int(i64, x); };
  std::unordered_map<const Value*, Value*> wide;  // each scalar widened once
  auto bound = [&](const Affine& a, int64_t offset) {
    Value* sum = offset != 0 || a.terms.empty() ? constant(offset) : nullptr;
    for (const auto& [v, c] : a.terms) {
      Value*& x = wide[v];
      if (!x) x = b.create_value(OpKind::Cast, {v}, i64);
      Value* term = c == 1 ? x : b.create_value(OpKind::Mul, {x, constant(c)}, i64);
      sum = sum ? b.create_value(OpKind::Add, {sum, term}, i64) : term;
    }
    return sum;
  };
  Value* test = nullptr;
  auto both = [&](Value* t) { test = test ? b.create_value(OpKind::And, {test, t}, i1) : t; };
  for (const Affine& a : forms) {
    both(b.create_value(OpKind::CmpGe, {bound(a, a.lo), constant(0)}, i1));
    both(b.create_value(OpKind::CmpLe,
                        {bound(a, a.hi), constant(std::numeric_limits<int32_t>::max())}, i1));
  }
  return test;
}

/// Rewrites `fn`'s body from top-level op `split` to its end into `if (every form's elements in
/// [0, INT32_MAX]) { a copy } else { as written }`; returns the map from the tail's values to
/// the copy's.
std::unordered_map<const Value*, Value*> split_tail(ir::Module& m, ir::Function& fn, size_t split,
                                                    const std::vector<Affine>& forms) {
  ir::Region* body = fn.body;
  Op* first = body->ops[split];
  ir::Builder b(m);
  b.set_insertion_before(first);
  b.set_loc(first->loc);
  Value* test = build_test(b, forms);
  Op* branch = b.create(OpKind::If, {test}, {});
  ir::Region* then_region = b.add_region(branch);
  ir::Region* else_region = b.add_region(branch);

  // The tail (every op after the branch; a function body has no terminator) moves into `else`.
  auto at = std::find(body->ops.begin(), body->ops.end(), branch);
  std::vector<Op*> tail(at + 1, body->ops.end());
  body->ops.erase(at + 1, body->ops.end());
  for (Op* op : tail) {
    op->parent = else_region;
    else_region->ops.push_back(op);
  }
  // `then`: a copy.
  std::unordered_map<const Value*, Value*> map;
  for (const Op* op : tail) {
    Op* copy = clone(m, *op, map);
    copy->parent = then_region;
    then_region->ops.push_back(copy);
  }
  for (ir::Region* r : {then_region, else_region}) {
    ir::Builder rb(m, r);
    rb.set_loc(first->loc);
    rb.create(OpKind::Yield, {}, {});
  }
  return map;
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
  const Analysis analysis(fn, split);
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
  const Analysis analysis(fn, split);
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
