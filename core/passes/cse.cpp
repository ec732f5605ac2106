/// \file Scoped common-subexpression elimination: one pre-order walk with a stack of hash sets;
/// loads take part between the ops that may change memory.
#include "core/passes/cse.h"

#include <bit>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir/attr_names.h"

namespace tessera::passes {
namespace {

using ir::Op;

size_t mix(size_t seed, size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

size_t hash_type(const ir::Type& t) {
  size_t h = mix(static_cast<size_t>(t.dtype), t.is_ptr);
  for (int64_t d : t.shape) h = mix(h, static_cast<size_t>(d));
  return mix(h, static_cast<size_t>(t.mat));
}

/// Doubles hash and compare by their bits: -0.0 is not 0.0, and a NaN equals itself.
struct AttrHash {
  size_t operator()(const int64_t& v) const { return std::hash<int64_t>()(v); }
  size_t operator()(const double& v) const {
    return std::hash<uint64_t>()(std::bit_cast<uint64_t>(v));
  }
  size_t operator()(const std::string& v) const { return std::hash<std::string>()(v); }
  size_t operator()(const std::vector<int64_t>& v) const {
    size_t h = v.size();
    for (int64_t x : v) h = mix(h, static_cast<size_t>(x));
    return h;
  }
  size_t operator()(const ir::Type& v) const { return hash_type(v); }
};

bool same_attr_value(const ir::AttrValue& a, const ir::AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(std::get<double>(b));
  return a == b;
}

struct OpHash {
  size_t operator()(const Op* op) const {
    size_t h = static_cast<size_t>(op->kind);
    for (const ir::Value* v : op->operands) h = mix(h, std::hash<const void*>()(v));
    for (const ir::Attribute& a : op->attrs) {
      h = mix(h, std::hash<std::string>()(a.name));
      h = mix(h, std::visit(AttrHash(), a.value));
    }
    for (const ir::Value* r : op->results) h = mix(h, hash_type(r->type));
    return h;
  }
};

struct OpEqual {
  bool operator()(const Op* a, const Op* b) const {
    if (a->kind != b->kind || a->operands != b->operands) return false;
    if (a->attrs.size() != b->attrs.size() || a->results.size() != b->results.size()) return false;
    for (size_t i = 0; i < a->attrs.size(); ++i) {
      if (a->attrs[i].name != b->attrs[i].name) return false;
      if (!same_attr_value(a->attrs[i].value, b->attrs[i].value)) return false;
    }
    for (size_t i = 0; i < a->results.size(); ++i)
      if (a->results[i]->type != b->results[i]->type) return false;
    return true;
  }
};

/// A tile load that may merge with an equal earlier one (a volatile load reads every time).
bool is_mergeable_load(const Op* op) {
  return op->kind == ir::OpKind::Load && op->int_attr_or(attr::kVolatile, 0) == 0;
}

bool is_candidate(const Op* op) {
  if (is_mergeable_load(op)) return true;
  return op->has(ir::kPure) && op->regions.empty() && !op->results.empty();
}

/// May `op` itself change memory or order accesses (a store, an atomic, a barrier, an impure
/// asm, a print or assert)?
bool clobbers(const Op* op) {
  return op->has(ir::kMemWrite) || op->has(ir::kSideEffect);
}

/// Does anything in `op`'s regions clobber?
bool clobbers_inside(Op* op) {
  bool any = false;
  for (ir::Region* r : op->regions) ir::walk(r, [&](const Op* inner) { any |= clobbers(inner); });
  return any;
}

/// The disjoint group of a load or store (attr::kDisjoint), 0 for none.
int64_t disjoint_group(const Op* op) {
  return op->int_attr_or(attr::kDisjoint, 0);
}

class Cse {
 public:
  bool run(ir::Region* body) {
    visit(body);
    return changed_;
  }

 private:
  using Scope = std::unordered_set<Op*, OpHash, OpEqual>;

  /// Walks `region` in order: every use comes after its definition, so rewriting operands
  /// through `replaced_` as ops are reached catches every use of a merged result.
  ///
  /// A load merges with an equal earlier load only while no op in between (in this order of
  /// visits) may have changed memory: a clobbering op forgets every load seen so far, and so does
  /// entering a loop that clobbers anywhere inside (its next iteration follows the clobber). A
  /// store of a disjoint group (attr::kDisjoint: a run-time test proved that it writes none of
  /// the bytes that the group's loads read) forgets the other loads only.
  void visit(ir::Region* region) {
    scopes_.emplace_back();
    loads_.emplace_back();
    std::vector<bool> keep;
    keep.reserve(region->ops.size());
    for (Op* op : region->ops) {
      substitute(op);
      Op* prior = is_candidate(op) ? find(op) : nullptr;
      keep.push_back(prior == nullptr);
      if (prior) {
        merge(op, prior);
        continue;
      }
      if (clobbers(op)) forget_loads(op->kind == ir::OpKind::Store ? disjoint_group(op) : 0);
      if (is_candidate(op)) {
        scopes_.back().insert(op);
        if (op->kind == ir::OpKind::Load) loads_.back().push_back(op);
      }
      const bool loop = op->kind == ir::OpKind::For || op->kind == ir::OpKind::While;
      if (!op->regions.empty() && loop && clobbers_inside(op)) forget_loads(0);
      for (ir::Region* r : op->regions) visit(r);
    }
    remove_merged(region, keep);
    loads_.pop_back();
    scopes_.pop_back();
  }

  /// Forgets the loads seen so far, but those of disjoint group `keep_group` (when not 0).
  void forget_loads(int64_t keep_group) {
    for (size_t level = 0; level < loads_.size(); ++level) {
      std::vector<Op*> kept;
      for (Op* load : loads_[level]) {
        if (keep_group != 0 && disjoint_group(load) == keep_group)
          kept.push_back(load);
        else
          scopes_[level].erase(load);
      }
      loads_[level] = std::move(kept);
    }
  }

  void substitute(Op* op) {
    for (ir::Value*& v : op->operands) {
      auto it = replaced_.find(v);
      if (it != replaced_.end()) v = it->second;
    }
  }

  /// The equivalent op visible from the current scope (innermost first), or null.
  Op* find(Op* op) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(op);
      if (it != scope->end()) return *it;
    }
    return nullptr;
  }

  void merge(Op* op, Op* prior) {
    for (size_t i = 0; i < op->results.size(); ++i) replaced_[op->results[i]] = prior->results[i];
    changed_ = true;
  }

  static void remove_merged(ir::Region* region, const std::vector<bool>& keep) {
    for (size_t i = 0; i < keep.size(); ++i)
      if (!keep[i]) region->ops[i]->parent = nullptr;
    std::vector<Op*> kept;
    for (size_t i = 0; i < keep.size(); ++i)
      if (keep[i]) kept.push_back(region->ops[i]);
    region->ops = std::move(kept);
  }

  std::vector<Scope> scopes_;
  std::vector<std::vector<Op*>> loads_;  ///< the loads in each scope of scopes_
  std::unordered_map<ir::Value*, ir::Value*> replaced_;
  bool changed_ = false;
};

}  // namespace

bool eliminate_common_subexpressions(ir::Module& m) {
  bool changed = false;
  for (auto& fn : m.functions) changed |= Cse().run(fn->body);
  return changed;
}

}  // namespace tessera::passes
