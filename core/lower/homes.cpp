/// \file Home layouts (homes.h): a walk over the kernel that gives each non-free tile value the
/// layout its producer works in, loop-carried values after two passes over the body.
#include "core/lower/homes.h"

#include <algorithm>
#include <bit>

#include "core/ir/ops.h"
#include "core/support/error.h"

namespace tessera::lower {

using ir::OpKind;

bool is_free_kind(OpKind k) {
  switch (k) {
    case OpKind::Constant:
    case OpKind::Arange:
    case OpKind::Splat:
    case OpKind::Broadcast:
    case OpKind::ExpandDims:
    case OpKind::Reshape:
    case OpKind::Permute:
    case OpKind::MultipleOf:
    case OpKind::MaxContiguous:
      return true;
    default:
      return ir::has_trait(k, ir::kElementwise);
  }
}

namespace {

/// A layout whose bits along `axis` run registers first, then lanes, then subgroups (what scans
/// need), from the input's home when it already is one.
Layout scan_layout(const Layout& l, int axis, int64_t threads) {
  int last = -1;  // 0 reg, 1 thread
  bool ok = true;
  int bits = log2_exact(l.shape[static_cast<size_t>(axis)]);
  for (int b = 0; b < bits && ok; ++b) {
    int kind = -1;
    for (const DimBit& r : l.regs)
      if (r == DimBit{axis, b}) kind = 0;
    for (size_t i = 0; i < l.threads.size(); ++i)
      if (l.threads[i] == DimBit{axis, b}) kind = 1 + static_cast<int>(i);
    ok = kind >= last;
    last = kind;
  }
  if (ok) return l;
  std::vector<int> order = {axis};
  for (int d = l.rank() - 1; d >= 0; --d)
    if (d != axis) order.push_back(d);
  int64_t n = l.shape[static_cast<size_t>(axis)];
  return blocked(l.shape, order, static_cast<int>(std::max<int64_t>(1, n / threads)), threads);
}

}  // namespace

Homes::Homes(const ir::Function& fn, const AxisInfoMap& axis, int64_t threads,
             std::function<const Layout&(const ir::Op&)> dot_layout)
    : axis_(axis), threads_(threads), dot_layout_(std::move(dot_layout)) {
  region(*fn.body);
}

bool Homes::is_free(const ir::Value* v) const {
  if (!v->type.is_tile()) return true;
  auto it = free_.find(v);
  return it != free_.end() && it->second;
}

const Layout& Homes::home(const ir::Value* v) const {
  auto it = homes_.find(v);
  TESSERA_CHECK(it != homes_.end(), "no home layout for a non-free tile value");
  return it->second;
}

Layout Homes::coalesced(const ir::Value* ptr) const {
  const ir::Shape& shape = ptr->type.shape;
  const AxisInfo& a = axis_.get(ptr);
  std::vector<int> order;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return a.contiguity[static_cast<size_t>(x)] > a.contiguity[static_cast<size_t>(y)];
  });
  size_t fast = static_cast<size_t>(order[0]);
  int64_t elem = ir::dtype_bytes(ptr->type.dtype);
  int64_t vec = std::max<int64_t>(1, 16 / elem);
  vec = std::min(vec, a.contiguity[fast]);
  vec = std::min(vec, std::max<int64_t>(1, a.divisibility[fast] / elem));
  vec = std::min(vec, shape[fast]);
  vec = std::min(vec, std::max<int64_t>(1, ptr->type.numel() / threads_));
  vec = int64_t{1} << log2_exact(std::bit_floor(static_cast<uint64_t>(vec)));
  return blocked(shape, order, static_cast<int>(vec), threads_);
}

Layout Homes::linear(const Layout& l) const {
  return l.mats ? mat_twin(l, threads_) : l;
}

Layout Homes::layout_for(const ir::Value* v) const {
  if (!is_free(v) && known(v)) return linear(homes_.at(v));
  return default_layout(v->type.shape, threads_);
}

Layout Homes::operand_layout(const ir::Op& o) const {
  return layout_for(o.operand(0));
}

Layout Homes::operand_home(const ir::Op& o) const {
  for (const ir::Value* v : o.operands)
    if (v->type.is_tile() && !is_free(v) && known(v)) return linear(homes_.at(v));
  return default_layout(o.result()->type.shape, threads_);
}

void Homes::region(const ir::Region& r) {
  for (const ir::Op* o : r.ops) op(*o);
}

void Homes::loop_args(const ir::Region& body, size_t first, std::span<ir::Value* const> inits) {
  // First pass: an argument takes its init's home, a pointer tile the coalesced layout; others
  // wait for what the body yields.
  bool waiting = false;
  for (size_t i = 0; i < inits.size(); ++i) {
    const ir::Value* arg = body.args[first + i];
    if (!arg->type.is_tile()) continue;
    free_[arg] = false;
    if (!is_free(inits[i]) && known(inits[i]))
      homes_[arg] = homes_.at(inits[i]);
    else if (arg->type.is_ptr)
      homes_[arg] = coalesced(arg);
    else {
      homes_.erase(arg);
      waiting = true;
    }
  }
  region(body);
  // With every argument's home fixed before the body was walked, a second walk would see the
  // same homes; skipping it keeps nested loops linear (each level walked twice made 256 nested
  // loops take 2^256 walks).
  if (!waiting) return;
  const ir::Op* y = body.terminator();
  for (size_t i = 0; i < inits.size(); ++i) {
    const ir::Value* arg = body.args[first + i];
    if (!arg->type.is_tile() || known(arg)) continue;
    const ir::Value* yv = y ? y->operand(i) : nullptr;
    homes_[arg] =
        yv && !is_free(yv) && known(yv) ? homes_.at(yv) : default_layout(arg->type.shape, threads_);
  }
  region(body);  // second pass with every argument's home fixed
}

void Homes::op(const ir::Op& o) {
  switch (o.kind) {
    case OpKind::For:
      return for_op(ir::ForOp(&o));
    case OpKind::While:
      return while_op(ir::WhileOp(&o));
    case OpKind::If:
      return if_op(ir::IfOp(&o));
    default:
      break;
  }
  for (const ir::Region* r : o.regions) region(*r);
  if (o.results.empty()) return;
  const ir::Value* r = o.result();
  bool all_free = is_free_kind(o.kind);
  for (const ir::Value* v : o.operands) all_free = all_free && is_free(v);
  for (const ir::Value* res : o.results) free_[res] = all_free;
  if (all_free || !r->type.is_tile()) {
    if (o.kind == OpKind::Reduce || o.kind == OpKind::ReduceGeneric) free_[r] = false;
    if (o.kind != OpKind::Reduce && o.kind != OpKind::ReduceGeneric) return;
  }
  result_homes(o);
}

void Homes::for_op(ir::ForOp f) {
  const ir::Op& o = *f.op;
  loop_args(*f.body(), 1, f.inits());
  for (size_t i = 0; i < o.results.size(); ++i) {
    free_[o.results[i]] = false;
    if (o.results[i]->type.is_tile()) homes_[o.results[i]] = homes_.at(f.body()->args[i + 1]);
  }
}

void Homes::while_op(ir::WhileOp w) {
  const ir::Op& o = *w.op;
  // The carried values live in the before-region's arguments, the after-region's arguments
  // and the results: one home each, unified with the before-argument's.
  for (size_t i = 0; i < o.operands.size(); ++i) {
    const ir::Value* arg = w.before()->args[i];
    free_[arg] = false;
    if (!arg->type.is_tile()) continue;
    if (!is_free(o.operand(i)) && known(o.operand(i)))
      homes_[arg] = homes_.at(o.operand(i));
    else
      homes_[arg] = arg->type.is_ptr ? coalesced(arg) : default_layout(arg->type.shape, threads_);
  }
  for (size_t i = 0; i < w.after()->args.size(); ++i) {
    const ir::Value* a = w.after()->args[i];
    free_[a] = false;
    if (a->type.is_tile()) homes_[a] = homes_.at(w.before()->args[i]);
  }
  region(*w.before());
  region(*w.after());
  for (size_t i = 0; i < o.results.size(); ++i) {
    free_[o.results[i]] = false;
    if (o.results[i]->type.is_tile()) homes_[o.results[i]] = homes_.at(w.before()->args[i]);
  }
}

void Homes::if_op(ir::IfOp f) {
  const ir::Op& o = *f.op;
  region(*f.then_region());
  region(*f.else_region());
  for (size_t i = 0; i < o.results.size(); ++i) {
    const ir::Value* r = o.results[i];
    free_[r] = false;
    if (!r->type.is_tile()) continue;
    const ir::Value* t = f.then_region()->terminator()->operand(i);
    const ir::Value* e = f.else_region()->terminator()->operand(i);
    if (!is_free(t) && known(t))
      homes_[r] = homes_.at(t);
    else if (!is_free(e) && known(e))
      homes_[r] = homes_.at(e);
    else
      homes_[r] = default_layout(r->type.shape, threads_);
  }
}

void Homes::result_homes(const ir::Op& o) {
  const ir::Value* r = o.result();
  switch (o.kind) {
    case OpKind::Load:
    case OpKind::AtomicRmw:
    case OpKind::AtomicCas:
      homes_[r] = coalesced(o.operand(0));
      return;
    case OpKind::DescLoad:
      homes_[r] = desc_load_home(r);
      return;
    case OpKind::Dot:
      homes_[r] = dot_layout_(o);
      return;
    case OpKind::Reduce:
    case OpKind::ReduceGeneric: {
      Layout l = layout_for(o.operand(0));
      for (const ir::Value* res : o.results)
        if (res->type.is_tile()) homes_[res] = slice(l, static_cast<int>(o.int_attr(attr::kAxis)));
      return;
    }
    case OpKind::Scan:
    case OpKind::ScanGeneric: {
      Layout l = layout_for(o.operand(0));
      Layout s = scan_layout(l, static_cast<int>(o.int_attr(attr::kAxis)), threads_);
      for (const ir::Value* res : o.results) homes_[res] = s;
      return;
    }
    // Shape ops of a non-free tile relabel its home's bits (lower_free undoes the relabeling,
    // so they move no data).
    case OpKind::Permute:
      homes_[r] = permute(operand_layout(o), o.ints_attr(attr::kOrder));
      return;
    case OpKind::Reshape:
      homes_[r] = reshape(operand_layout(o), r->type.shape);
      return;
    case OpKind::ExpandDims:
      homes_[r] = expand_dims(operand_layout(o), static_cast<int>(o.int_attr(attr::kAxis)));
      return;
    case OpKind::Broadcast:
      homes_[r] = broadcast(operand_layout(o), r->type.shape);
      return;
    case OpKind::Cat: {
      Layout l = layout_for(o.operand(0));
      homes_[r] = cat(l, static_cast<int>(o.int_attr(attr::kAxis)));
      return;
    }
    case OpKind::InlineAsm:
    case OpKind::InlineAsmImpure: {
      const Layout l = inline_asm_home(o);
      for (const ir::Value* res : o.results) homes_[res] = l;
      return;
    }
    default:
      homes_[r] = operand_home(o);
      return;
  }
}

Layout Homes::desc_load_home(const ir::Value* r) const {
  // (kept for TMA, core/lower/tma.h) As its expansion would load it: 16 bytes per thread along
  // the innermost dimension (stride 1), the others outward.
  const ir::Shape& shape = r->type.shape;
  std::vector<int> order;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) order.push_back(d);
  int64_t vec = std::max<int64_t>(1, 16 / ir::dtype_bytes(r->type.dtype));
  vec = std::min({vec, shape.back(), std::max<int64_t>(1, r->type.numel() / threads_)});
  vec = int64_t{1} << log2_exact(std::bit_floor(static_cast<uint64_t>(vec)));
  return blocked(shape, order, static_cast<int>(vec), threads_);
}

Layout Homes::inline_asm_home(const ir::Op& o) const {
  // One home for every result; with pack > 1, one whose registers hold `pack` consecutive
  // elements of the last dimension (the kernel language checked that it has as many).
  Layout l = operand_home(o);
  const int64_t pack = o.int_attr_or(attr::kPack, 1);
  const int last = l.rank() - 1;
  if (pack > 1 && (l.mats || reg_run(l, last) < log2_exact(pack))) {
    std::vector<int> order;
    for (int d = last; d >= 0; --d) order.push_back(d);
    l = blocked(o.result()->type.shape, order, static_cast<int>(pack), threads_);
  }
  return l;
}

}  // namespace tessera::lower
