/// \file Affine forms, addresses and run-time tests (affine.h).
#include "core/passes/affine.h"

#include <algorithm>
#include <limits>

#include "core/ir/ops.h"
#include "core/passes/rewrite.h"

namespace tessera::passes {

using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {

constexpr int kMaxDepth = 64;
/// The most scalar terms one address's test sums: with coefficients up to 2^24, 32-bit scalars
/// and elements up to 16 bytes, a pointer (below 2^57) plus four such terms stays below 2^63.
constexpr size_t kMaxAddressTerms = 4;

/// Ops that only place a tile's elements (copy, repeat, reshape): each result element is an
/// operand element, so a form of the operand is a form of the result.
bool places_elements(OpKind k) {
  return k == OpKind::Splat || k == OpKind::Broadcast || k == OpKind::ExpandDims ||
         k == OpKind::Reshape || k == OpKind::Permute;
}

}  // namespace

bool Affine::bounded() const {
  if (terms.size() > kMaxTerms) return false;
  for (const auto& t : terms)
    if (t.second > kMaxCoefficient || t.second < -kMaxCoefficient) return false;
  return lo >= -kMaxRange && hi <= kMaxRange;
}

void Affine::add(const Affine& o, int64_t sign) {
  for (const auto& [v, c] : o.terms) {
    auto it = std::find_if(terms.begin(), terms.end(), [&](const auto& t) { return t.first == v; });
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

bool Affine::scale(int64_t c) {
  for (auto& t : terms) t.second *= c;  // at most 2^48
  std::erase_if(terms, [](const auto& t) { return t.second == 0; });
  const int64_t most = std::max(lo < 0 ? -lo : lo, hi < 0 ? -hi : hi);  // lo, hi >= -2^40
  if (c != 0 && most > std::numeric_limits<int64_t>::max() / (c < 0 ? -c : c)) return false;
  lo *= c;
  hi *= c;
  if (c < 0) std::swap(lo, hi);
  return true;
}

AffineAnalysis::AffineAnalysis(const ir::Function& fn, size_t split) : fn_(fn) {
  for (size_t i = 0; i < split; ++i) before_.insert(fn.body->ops[i]);
}

bool AffineAnalysis::available(const Value* v) const {
  if (v->is_arg())
    return std::any_of(fn_.params.begin(), fn_.params.end(),
                       [&](const ir::Param& p) { return p.value == v; });
  return before_.count(v->def) != 0;
}

Value* AffineAnalysis::read(Value* v) const {
  auto it = subst_.find(v);
  return it == subst_.end() ? v : it->second;
}

std::optional<Affine> AffineAnalysis::affine(Value* v, int depth) const {
  v = read(v);
  if (depth > kMaxDepth || v->type.dtype != DType::i32 || v->type.is_ptr) return std::nullopt;
  if (auto c = constant_value(v); c && !c->is_float()) return Affine::range(c->i, c->i);
  if (!v->type.is_tile() && available(v)) return Affine::scalar(v);
  const Op* op = v->def;
  if (!op) return std::nullopt;
  if (places_elements(op->kind)) return affine(op->operand(0), depth + 1);
  switch (op->kind) {
    case OpKind::Arange: {
      const ir::ArangeOp a(op);
      if (a.end() <= a.start()) return std::nullopt;
      return Affine::range(a.start(), a.end() - 1);
    }
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
      if (!a->is_constant() || a->lo > kMaxCoefficient || a->lo < -kMaxCoefficient || !b->bounded())
        return std::nullopt;
      if (!b->scale(a->lo)) return std::nullopt;
      return b;
    }
    default:
      return std::nullopt;
  }
}

std::optional<Address> AffineAnalysis::address(Value* v, int depth) const {
  v = read(v);
  if (depth > kMaxDepth || !v->type.is_ptr) return std::nullopt;
  const Op* op = v->def;
  if (op && op->kind == OpKind::PtrAdd) {
    std::optional<Address> a = address(op->operand(0), depth + 1);
    std::optional<Affine> off = a ? affine(op->operand(1), depth + 1) : std::nullopt;
    if (!off || !off->bounded()) return std::nullopt;
    a->offsets.emplace_back(std::move(*off), ir::dtype_bytes(v->type.dtype));
    return a;
  }
  if (!v->type.is_tile() && available(v)) return Address{v, {}};
  if (!op || !places_elements(op->kind)) return std::nullopt;
  return address(op->operand(0), depth + 1);
}

Value* TestBuilder::constant(int64_t x) {
  return b_.constant_int(Type::scalar(DType::i64), x);
}

Value* TestBuilder::wide(Value* v) {
  Value*& x = wide_[v];
  if (!x)
    x = v->type.is_ptr ? b_.create_value(OpKind::Bitcast, {v}, Type::scalar(DType::i64))
                       : b_.create_value(OpKind::Cast, {v}, Type::scalar(DType::i64));
  return x;
}

Value* TestBuilder::bound(const Affine& a, int64_t offset) {
  const Type i64 = Type::scalar(DType::i64);
  Value* sum = offset != 0 || a.terms.empty() ? constant(offset) : nullptr;
  for (const auto& [v, c] : a.terms) {
    Value* term = c == 1 ? wide(v) : b_.create_value(OpKind::Mul, {wide(v), constant(c)}, i64);
    sum = sum ? b_.create_value(OpKind::Add, {sum, term}, i64) : term;
  }
  return sum;
}

void TestBuilder::both(Value* t) {
  test_ = test_ ? b_.create_value(OpKind::And, {test_, t}, Type::scalar(DType::i1)) : t;
}

void TestBuilder::in_range(const Affine& a, int64_t lo, int64_t hi) {
  // A 32-bit scalar itself always lies in the 32-bit range; a fact already tested adds nothing.
  const bool whole =
      lo <= std::numeric_limits<int32_t>::min() && hi >= std::numeric_limits<int32_t>::max();
  if (whole && a.terms.size() == 1 && a.terms[0].second == 1 && a.lo == 0 && a.hi == 0 &&
      a.terms[0].first->type.dtype == DType::i32)
    return;
  if (a.terms.empty()) {  // index tiles and constants alone: decided here
    if (a.lo < lo || a.hi > hi) both(b_.constant_int(Type::scalar(DType::i1), 0));
    return;
  }
  for (const auto& [form, l, h] : tested_)
    if (form == a && l >= lo && h <= hi) return;
  tested_.emplace_back(a, lo, hi);
  const Type i1 = Type::scalar(DType::i1);
  both(b_.create_value(OpKind::CmpGe, {bound(a, a.lo), constant(lo)}, i1));
  both(b_.create_value(OpKind::CmpLe, {bound(a, a.hi), constant(hi)}, i1));
}

Value* TestBuilder::edge(const Address& a, bool high, int64_t extra) {
  const Type i64 = Type::scalar(DType::i64);
  Value* sum = wide(a.base);
  for (const auto& [off, bytes] : a.offsets) {
    Affine scaled = off;
    scaled.scale(bytes);  // bounded forms times at most 16: exact (disjoint checked the sizes)
    sum = b_.create_value(OpKind::Add, {sum, bound(scaled, high ? scaled.hi : scaled.lo)}, i64);
  }
  return extra == 0 ? sum : b_.create_value(OpKind::Add, {sum, constant(extra)}, i64);
}

bool TestBuilder::testable(const Address& a) {
  size_t terms = 0;
  for (const auto& [off, bytes] : a.offsets) {
    if (!off.bounded() || bytes > 16) return false;
    terms += off.terms.size();
  }
  return terms <= kMaxAddressTerms;
}

bool TestBuilder::disjoint(const Address& a, int64_t a_bytes, const Address& b, int64_t b_bytes) {
  if (!testable(a) || !testable(b) || a_bytes > 16 || b_bytes > 16) return false;
  for (const Address* x : {&a, &b})
    for (const auto& [off, bytes] : x->offsets)
      in_range(off, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  const Type i1 = Type::scalar(DType::i1);
  Value* a_before_b =
      b_.create_value(OpKind::CmpLe, {edge(a, true, a_bytes), edge(b, false, 0)}, i1);
  Value* b_before_a =
      b_.create_value(OpKind::CmpLe, {edge(b, true, b_bytes), edge(a, false, 0)}, i1);
  both(b_.create_value(OpKind::Or, {a_before_b, b_before_a}, i1));
  return true;
}

Op* clone_op(ir::Module& m, const Op& op, std::unordered_map<const Value*, Value*>& map) {
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
      Op* c = clone_op(m, *inner, map);
      c->parent = nr;
      nr->ops.push_back(c);
    }
  }
  return copy;
}

std::unordered_map<const Value*, Value*> version_tail_with(ir::Module& m, ir::Function& fn,
                                                           Op* first, Value* test) {
  ir::Region* body = fn.body;
  ir::Builder b(m);
  b.set_insertion_before(first);
  b.set_loc(first->loc);
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
    Op* copy = clone_op(m, *op, map);
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

}  // namespace tessera::passes
