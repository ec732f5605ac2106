/// \file Pointer-tile loads feeding a loop's dot as tensor-descriptor loads (descriptor_loads.h).
#include "core/passes/descriptor_loads.h"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <vector>

#include "core/ir/builder.h"
#include "core/ir/ops.h"
#include "core/lower/axis_info.h"
#include "core/lower/tma.h"
#include "core/passes/rem_version.h"
#include "core/passes/rewrite.h"

namespace tessera::passes {
namespace {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

constexpr int kRank = 2;

/// An index tile along dimension `dim` of its value: the sum of `starts` (uniform scalars) plus
/// arange(0, len) along that dimension, constant along the others.
struct Index {
  int dim = 0;
  int64_t len = 0;
  std::vector<Value*> starts;
};

/// One dimension's part of a pointer tile's offset: `index` times `stride` (a scalar), or times
/// `cstride` where `stride` is null.
struct Term {
  Index index;
  Value* stride = nullptr;
  int64_t cstride = 1;
};

const Op* def(const Value* v) {
  return v->is_arg() ? nullptr : v->def;
}

/// The scalar `v` splats, or null.
Value* splatted(const Value* v) {
  const Op* op = def(v);
  return op && op->kind == OpKind::Splat && !op->operand(0)->type.is_tile() ? op->operand(0)
                                                                            : nullptr;
}

/// The integer a constant (scalar or tile) holds.
std::optional<int64_t> constant_int(const Value* v) {
  const std::optional<Scalar> c = constant_value(v);
  if (!c || c->is_float()) return std::nullopt;
  return c->i;
}

/// `v` (an i32 tile) as an Index, or none.
std::optional<Index> index_of(const Value* v, int depth = 0) {
  const Op* op = def(v);
  if (!op || depth > 16 || v->type.dtype != DType::i32 || v->type.is_ptr) return std::nullopt;
  switch (op->kind) {
    case OpKind::Arange: {
      const ir::ArangeOp a(op);
      if (a.start() != 0) return std::nullopt;
      return Index{0, a.end(), {}};
    }
    case OpKind::ExpandDims: {
      std::optional<Index> x = index_of(op->operand(0), depth + 1);
      if (x && ir::ExpandDimsOp(op).axis() <= x->dim) ++x->dim;
      return x;
    }
    case OpKind::Broadcast:
      return index_of(op->operand(0), depth + 1);
    case OpKind::Add:
      for (int i = 0; i < 2; ++i) {
        Value* s = splatted(op->operand(1 - i));
        if (!s) continue;
        std::optional<Index> x = index_of(op->operand(i), depth + 1);
        if (x) x->starts.push_back(s);
        return x;
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

/// Adds the terms of offset tile `v` (a sum of index tiles times strides) to `out`.
bool offset_terms(const Value* v, std::vector<Term>& out, int depth = 0) {
  const Op* op = def(v);
  if (!op || depth > 16) return false;
  if (std::optional<Index> x = index_of(v)) {
    out.push_back({*x, nullptr, 1});
    return true;
  }
  switch (op->kind) {
    case OpKind::Broadcast:
      return offset_terms(op->operand(0), out, depth + 1);
    case OpKind::Add:
      return offset_terms(op->operand(0), out, depth + 1) &&
             offset_terms(op->operand(1), out, depth + 1);
    case OpKind::Mul:
      for (int i = 0; i < 2; ++i) {
        std::optional<Index> x = index_of(op->operand(i));
        if (!x) continue;
        const Value* s = op->operand(1 - i);
        if (std::optional<int64_t> c = constant_int(s)) {
          out.push_back({*x, nullptr, *c});
          return true;
        }
        if (Value* scalar = splatted(s)) {
          out.push_back({*x, scalar, 1});
          return true;
        }
        return false;
      }
      return false;
    default:
      return false;  // (an expand_dims of a sum is not matched)
  }
}

/// Pointer tile `v` as base + the terms' sum.
Value* pointer_terms(const Value* v, std::vector<Term>& out, int depth = 0) {
  const Op* op = def(v);
  if (!op || depth > 16) return nullptr;
  if (Value* base = splatted(v)) return base;
  if (op->kind == OpKind::Broadcast) return pointer_terms(op->operand(0), out, depth + 1);
  if (op->kind == OpKind::PtrAdd && offset_terms(op->operand(1), out))
    return pointer_terms(op->operand(0), out, depth + 1);
  return nullptr;
}

/// The mask `index < bound` per dimension (bounds[d] null where none), an `and` of such
/// comparisons broadcast to the block; false for any other mask.
struct MaskBounds {
  Index idx[kRank];
  Value* bounds[kRank] = {};
  Value* values[kRank] = {};  ///< the index tiles compared
};
bool mask_bounds(const Value* v, MaskBounds& out, int depth = 0) {
  const Op* op = def(v);
  if (!op || depth > 16) return false;
  if (op->kind == OpKind::Broadcast) return mask_bounds(op->operand(0), out, depth + 1);
  if (op->kind == OpKind::And)
    return mask_bounds(op->operand(0), out, depth + 1) &&
           mask_bounds(op->operand(1), out, depth + 1);
  if (op->kind != OpKind::CmpLt || v->type.shape.size() != kRank) return false;
  std::optional<Index> x = index_of(op->operand(0));
  Value* bound = splatted(op->operand(1));
  if (!x || !bound || out.bounds[x->dim]) return false;
  out.idx[x->dim] = *x;
  out.bounds[x->dim] = bound;
  out.values[x->dim] = op->operand(0);
  return true;
}

bool same_starts(std::vector<Value*> a, std::vector<Value*> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

/// A load the rewrite takes, and the descriptor's operands (in the load's dimension order).
struct Match {
  Op* load = nullptr;
  Value* base = nullptr;
  Value* bounds[kRank] = {};
  Term terms[kRank];
  int moving = -1;  ///< the dimension the induction variable advances
  /// The index tiles (of the mask) whose one start is not provably >= 0: a run-time test must
  /// prove their elements in [0, INT32_MAX] first.
  std::vector<Value*> unproven;
};

using Facts = std::unordered_set<const Value*>;

/// Is `load`'s one use a dot of its body (directly or through a transpose)?
bool feeds_dot(const Op& load) {
  const ir::Region& body = *load.parent;
  const Value* r = load.result();
  int uses = 0;
  bool dot = false;
  for (const Op* op : body.ops)
    for (size_t i = 0; i < op->operands.size(); ++i) {
      if (op->operands[i] != r) continue;
      ++uses;
      if (op->kind == OpKind::Dot && i < 2) dot = true;
      if (op->kind == OpKind::Permute && op->ints_attr(attr::kOrder) == std::vector<int64_t>{1, 0})
        dot = std::any_of(body.ops.begin(), body.ops.end(), [&](const Op* d) {
          return d->kind == OpKind::Dot &&
                 (d->operand(0) == op->result() || d->operand(1) == op->result());
        });
    }
  return uses == 1 && dot;
}

/// The terms of `m.load`'s pointers; for a carried pointer tile (advanced by a loop-invariant
/// increment) those of its initial value, with `m.moving` the dimension it advances along.
std::optional<std::vector<Term>> pointer_of(Match& m, const ir::ForOp& f, const Value*& inc) {
  const ir::Region* body = f.body();
  const Value* ptr = ir::LoadOp(m.load).ptr();
  std::vector<Term> terms;
  const auto args = f.iter_args();
  const auto it = std::find(args.begin(), args.end(), ptr);
  if (it == args.end()) {  // computed where it is loaded (from the induction variable, ...)
    m.base = pointer_terms(ptr, terms);
    return terms;
  }
  const size_t i = static_cast<size_t>(it - args.begin());
  const Op* next = def(body->terminator()->operand(i));
  if (!next || next->kind != OpKind::PtrAdd || next->operand(0) != ptr) return std::nullopt;
  inc = next->operand(1);
  m.base = pointer_terms(f.inits()[i], terms);
  return terms;
}

/// For a carried pointer: does its increment advance it by `step` elements of the moving
/// index (inc == step * that index's stride)?
bool advances_with_loop(const Match& m, const Value* inc, int64_t step) {
  const Term& mv = m.terms[m.moving];
  if (!mv.stride) return constant_int(inc) == step * mv.cstride;
  const Value* s = splatted(inc);
  const Op* mul = s ? def(s) : nullptr;
  if (!mul || mul->kind != OpKind::Mul) return false;
  return (mul->operand(0) == mv.stride && constant_int(mul->operand(1)) == step) ||
         (mul->operand(1) == mv.stride && constant_int(mul->operand(0)) == step);
}

/// The rewrite of `load`, if it applies where the starts in `nonneg` are >= 0.
std::optional<Match> match(Op* load, const Facts& nonneg) {
  const ir::Region* body = load->parent;
  if (!body || !body->parent || body->parent->kind != OpKind::For) return std::nullopt;
  const ir::ForOp f(body->parent);
  const ir::LoadOp ld(load);
  const Type& t = load->result()->type;
  if (t.shape.size() != kRank || load->int_attr_or(attr::kVolatile, 0) != 0 || !ld.mask())
    return std::nullopt;
  if (ld.other() && !(ir::is_float(t.dtype) ? is_float_bits(ld.other(), 0.0) : is_zero(ld.other())))
    return std::nullopt;
  if (!feeds_dot(*load) || f.iv()->type.dtype != DType::i32) return std::nullopt;

  Match m;
  m.load = load;
  const Value* inc = nullptr;
  const std::optional<std::vector<Term>> terms = pointer_of(m, f, inc);
  if (!terms || !m.base || m.base->type.is_tile() || terms->size() != kRank) return std::nullopt;
  for (const Term& term : *terms) {
    if (term.index.len != t.shape[static_cast<size_t>(term.index.dim)]) return std::nullopt;
    if (m.terms[term.index.dim].index.len != 0) return std::nullopt;  // two terms of one dim
    m.terms[term.index.dim] = term;
  }
  // The mask is the bounds test of the pointers' indices; a carried pointer's mask adds the
  // induction variable to one of them.
  MaskBounds mb;
  if (!mask_bounds(ld.mask(), mb) || !mb.bounds[0] || !mb.bounds[1]) return std::nullopt;
  for (int d = 0; d < kRank; ++d) {
    m.bounds[d] = mb.bounds[d];
    std::vector<Value*> starts = m.terms[d].index.starts;
    if (mb.idx[d].len != m.terms[d].index.len) return std::nullopt;
    if (same_starts(mb.idx[d].starts, starts)) continue;
    starts.push_back(f.iv());
    if (!inc || m.moving >= 0 || !same_starts(mb.idx[d].starts, starts)) return std::nullopt;
    m.moving = d;
  }
  if (inc) {
    // The induction variable counts elements from 0, by the pointers' step.
    const std::optional<int64_t> lb = constant_int(f.lower()), step = constant_int(f.step());
    if (m.moving < 0 || !lb || *lb != 0 || !step || *step <= 0) return std::nullopt;
    if (!advances_with_loop(m, inc, *step)) return std::nullopt;
    if (!lower::provably_nonneg(f.iv())) return std::nullopt;
  }
  // Every start never negative (the descriptor reads nothing below 0), or to be tested.
  for (int d = 0; d < kRank; ++d) {
    const std::vector<Value*>& starts = m.terms[d].index.starts;
    for (const Value* s : starts) {
      if (s->type.dtype != DType::i32) return std::nullopt;
      if (nonneg.count(s) || lower::provably_nonneg(s)) continue;
      if (starts.size() != 1 || d == m.moving) return std::nullopt;
      m.unproven.push_back(mb.values[d]);
    }
  }
  for (const Value* b : m.bounds)
    if (b->type.dtype != DType::i32) return std::nullopt;
  for (const Term& term : m.terms)
    if (term.stride && term.stride->type.dtype != DType::i32) return std::nullopt;
  return m;
}

/// Builds the descriptor load of `m` before its load and returns it with the ops it added (the
/// value replacing the load's result is the last op's result).
std::vector<Op*> build(ir::Module& mod, const Match& m) {
  Op* load = m.load;
  ir::Builder b(mod);
  b.set_insertion_before(load);
  b.set_loc(load->loc);
  std::vector<Op*> added;
  auto track = [&](Value* v) {
    added.push_back(v->def);
    return v;
  };
  const Type i32 = Type::scalar(DType::i32);
  Value* stride[kRank];
  Value* offset[kRank];
  for (int d = 0; d < kRank; ++d) {
    const Term& term = m.terms[d];
    stride[d] = term.stride ? term.stride : track(b.constant_int(i32, term.cstride));
    std::vector<Value*> starts = term.index.starts;
    if (d == m.moving) starts.push_back(ir::ForOp(load->parent->parent).iv());
    Value* sum = nullptr;
    for (Value* s : starts) sum = sum ? track(b.create_value(OpKind::Add, {sum, s}, i32)) : s;
    offset[d] = sum ? sum : track(b.constant_int(i32, 0));
  }
  // The dimension of stride 1 innermost: dimension 1 as loaded, else the transposed tensor.
  const bool transposed = !(m.terms[1].stride == nullptr && m.terms[1].cstride == 1);
  const int outer = transposed ? 1 : 0, inner = transposed ? 0 : 1;
  const Type& t = load->result()->type;
  const Type block = transposed ? t.with_shape({t.shape[1], t.shape[0]}) : t;
  Value* v = track(b.create_value(OpKind::DescLoad,
                                  {m.base, m.bounds[outer], m.bounds[inner], stride[outer],
                                   stride[inner], offset[outer], offset[inner]},
                                  block));
  if (transposed)
    track(b.create_value(OpKind::Permute, {v}, t, {{attr::kOrder, std::vector<int64_t>{1, 0}}}));
  return added;
}

void erase(const std::vector<Op*>& ops) {
  for (Op* op : ops) std::erase(op->parent->ops, op);
}

/// Builds `x`'s descriptor load; keeps it (erasing the load) where TMA can copy it into the
/// loop's ring and `keep` holds, else takes it back. True where TMA can copy it.
bool rewrite(ir::Module& m, const ir::Function& fn, const Match& x, const target::Target& target,
             bool keep) {
  std::vector<Op*> added = build(m, x);
  Op* desc = *std::find_if(added.begin(), added.end(),
                           [](const Op* op) { return op->kind == OpKind::DescLoad; });
  Value* value = added.back()->result();
  ir::replace_all_uses(x.load->parent, x.load->result(), value);
  const bool copied = lower::plan_tma(fn, *desc, target, nullptr) && lower::feeds_loop_dot(*desc);
  if (!copied || !keep) {
    ir::replace_all_uses(x.load->parent, value, x.load->result());
    erase(added);
    return copied;
  }
  erase({x.load});
  return true;
}

/// The loads of `fn` whose starts are not provably >= 0 (each in a loop of the body's top
/// level): the body from the first such loop on copied behind a test that proves them
/// (passes::version_nonneg), the copies' loads rewritten. True if any.
bool version_and_rewrite(ir::Module& m, ir::Function& fn, const std::vector<Match>& loads,
                         const target::Target& target) {
  const std::vector<Op*>& top = fn.body->ops;
  size_t split = top.size();
  std::vector<Value*> tested;
  Facts facts;
  for (const Match& x : loads) {
    const auto at = std::find(top.begin(), top.end(), x.load->parent->parent);
    if (at == top.end()) continue;  // a loop inside a branch or a loop: left as written
    split = std::min(split, static_cast<size_t>(at - top.begin()));
    tested.insert(tested.end(), x.unproven.begin(), x.unproven.end());
    for (const Term& term : x.terms)
      for (const Value* s : term.index.starts) facts.insert(s);
  }
  if (split == top.size()) return false;
  const auto map = version_nonneg(m, fn, split, tested);
  if (!map) return false;
  for (const Match& x : loads) {
    const auto copy = map->find(x.load->result());
    if (copy == map->end()) continue;
    if (std::optional<Match> y = match(copy->second->def, facts); y && y->unproven.empty())
      rewrite(m, fn, *y, target, /*keep=*/true);
  }
  return true;  // (a copy left with pointer loads is undone by the pipeline's plan step)
}

}  // namespace

bool pointer_loads_to_descriptors(ir::Module& m, const target::Target& target) {
  if (!target.has(target::Cap::Tma)) return false;
  bool changed = false;
  for (auto& fn : m.functions) {
    std::vector<Match> matches;
    ir::walk(fn->body, [&](Op* op) {
      if (op->kind != OpKind::Load) return;
      if (std::optional<Match> x = match(op, {})) matches.push_back(*x);
    });
    std::vector<Match> versioned;  // those whose starts a test must prove >= 0 first
    for (const Match& x : matches) {
      if (x.unproven.empty())
        changed |= rewrite(m, *fn, x, target, /*keep=*/true);
      else if (rewrite(m, *fn, x, target, /*keep=*/false))
        versioned.push_back(x);
    }
    changed |= version_and_rewrite(m, *fn, versioned, target);
  }
  return changed;
}

}  // namespace tessera::passes
