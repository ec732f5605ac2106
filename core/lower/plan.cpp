/// \file The lowering plan (plan.h): made in order (axis info, dot plans, homes, loop plans) and
/// printed for TESSERA_DUMP=layouts and the golden tests' `plans` step.
#include "core/lower/plan.h"

#include <sstream>

#include "core/ir/limits.h"
#include "core/ir/ops.h"
#include "core/ir/printer.h"
#include "core/lower/tma.h"
#include "core/support/error.h"

namespace tessera::lower {
namespace {

std::string name_of(const std::unordered_map<const ir::Value*, std::string>& names,
                    const ir::Value* v) {
  auto it = names.find(v);
  return it == names.end() ? std::string("%?") : it->second;
}

}  // namespace

std::string_view dot_kind_name(DotKind kind) {
  switch (kind) {
    case DotKind::Fma:
      return "fma";
    case DotKind::MmaSync:
      return "mma_sync";
    case DotKind::Wgmma:
      return "wgmma";
    case DotKind::CoopMat:
      return "coopmat";
    case DotKind::CoopMat2:
      return "coopmat2";
  }
  return "?";
}

std::string_view loop_kind_name(LoopKind kind) {
  switch (kind) {
    case LoopKind::Plain:
      return "plain";
    case LoopKind::CpAsyncRing:
      return "cp_async_ring";
    case LoopKind::RegisterRing:
      return "register_ring";
    case LoopKind::WarpSpecialized:
      return "warp_specialized";
  }
  return "?";
}

std::string DotPlan::str() const {
  std::ostringstream os;
  os << dot_kind_name(kind);
  if (kind == DotKind::MmaSync)
    os << " " << shape->shape << "." << shape->a << ", warps " << warps.m << "x" << warps.n;
  if (kind == DotKind::Wgmma)
    os << " " << wgmma->shape() << "." << wgmma->a
       << (swapped ? ", swapped (C^T = B^T A^T, B from registers)" : "") << ", warpgroups "
       << tiling.wg_m << "x" << tiling.wg_n << ", " << tiling.reps_m << "x" << tiling.reps_n
       << " instructions each";
  if (kind == DotKind::CoopMat) os << " " << acc.mats->m << "x" << acc.mats->n << "x" << mat_k;
  if (kind == DotKind::CoopMat2)
    os << " workgroup " << acc.mats->m << "x" << acc.mats->n << "x" << mat_k << " over "
       << acc.mats->lanes << " invocations, a and b by tensor-layout loads (clamped at edges)";
  if (a_registers) os << ", A from registers";
  if (ring) os << ", operands from a ring";
  os << "\n    acc " << acc.str();
  if (kind == DotKind::MmaSync) os << "\n    a   " << a.str() << "\n    b   " << b.str();
  if (kind == DotKind::Wgmma && swapped)
    os << "\n    a   " << wa.str()
       << " (wgmma's B)\n    b   n-major, read into registers (wgmma's A)";
  else if (kind == DotKind::Wgmma)
    os << "\n    a   " << wa.str() << "\n    b   " << wb.str();
  return os.str();
}

std::string LoopPlan::str(const std::unordered_map<const ir::Value*, std::string>& names) const {
  std::ostringstream os;
  os << loop_kind_name(kind);
  if (kind == LoopKind::Plain) return os.str();
  const std::vector<const ir::Op*> fed = dots();
  os << ", " << stages << " stages, " << prefetch << " ahead"
     << (async_dot ? ", async dot (copies after it)" : "")
     << (cluster > 1 ? ", shared by clusters of " + std::to_string(cluster) : "") << ", feeding ";
  for (size_t i = 0; i < fed.size(); ++i) os << (i ? ", " : "") << name_of(names, fed[i]->result());
  // The dot an operand belongs to is named where the ring feeds several.
  auto operand = [&](const ir::Op* dot, bool is_a) {
    return std::string(is_a ? "a" : "b") +
           (fed.size() > 1 || !held.empty() ? " of " + name_of(names, dot->result()) : "");
  };
  for (const RingFeed& f : feeds) {
    const RingLoad* l = &f.load;
    os << "\n    " << operand(f.dot, f.is_a) << " " << name_of(names, l->load->result())
       << (l->transposed ? " (transposed)" : "")
       << (l->tma             ? ": by TMA, " + l->tma->str() + ", "
           : l->via_registers ? ": through registers, " + std::to_string(l->width) + " per load, "
                              : ": " + std::to_string(l->width) + " per copy, ")
       << l->layout.str();
    if (l->slice) os << ", multicast by slices " << l->slice->str();
    if (l->iter_arg >= 0)
      os << ", pointer from " << name_of(names, l->init) << " + iteration x "
         << name_of(names, l->inc);
  }
  for (const HeldOperand& h : held) {
    const ir::DotOp d(h.dot);
    os << "\n    " << operand(h.dot, h.is_a) << " " << name_of(names, h.is_a ? d.lhs() : d.rhs())
       << ": held in shared memory across the loop";
  }
  return os.str();
}

LoweringPlan::LoweringPlan(const ir::Function& fn, const target::Target& target,
                           const CompileOptions& options, bool lean_rings)
    : fn_(fn),
      target_(target),
      options_(options),
      lean_rings_(lean_rings),
      threads_(int64_t{32} * options.num_warps),
      axis_(fn) {
  if (threads_ > target.max_threads)
    fail(ErrorKind::Unsupported, "kernel '", fn.name, "': num_warps = ", options.num_warps,
         " needs ", threads_, " threads per workgroup, but the target allows ", target.max_threads);
  if (target.subgroup_size <= 0 || threads_ % target.subgroup_size != 0)
    fail(ErrorKind::Unsupported, "kernel '", fn.name, "': ", threads_,
         " threads are not a whole number of subgroups of ", target.subgroup_size);
  ir::walk(fn.body, [&](const ir::Op* op) {
    for (const ir::Value* r : op->results) {
      const int64_t share = ir::capped_elements(r->type.shape) / threads_;
      if (r->type.is_tile() && share > ir::kMaxElementsPerThread)
        fail(ErrorKind::Unsupported, op->loc.str(), ": error: '", op->name(), "' makes a tile of ",
             r->type.str(), ", at least ", share,
             " elements per thread with num_warps = ", options.num_warps, ", over the limit of ",
             ir::kMaxElementsPerThread,
             " per thread (docs/design.md, Limits); use more warps or smaller tiles");
    }
    if (op->kind == ir::OpKind::Dot)
      dots_.emplace(op, plan_dot(*op, target, axis_, threads_, options.coopmat2));
    if (op->kind == ir::OpKind::DescStore)
      if (std::optional<ir::TensorMapParam> map = plan_tma_store(fn, *op, target, nullptr))
        tma_stores_.emplace(op, std::move(*map));
  });
  // A workgroup-scope dot reads its two desc_loads itself: where a load has another user, the
  // dot takes the next plan instead.
  std::unordered_map<const ir::Value*, int> uses;
  ir::walk(fn.body, [&](const ir::Op* op) {
    for (const ir::Value* v : op->operands) ++uses[v];
  });
  for (auto& [op, dp] : dots_) {
    if (dp.kind != DotKind::CoopMat2) continue;
    const ir::DotOp d(op);
    if (uses[d.lhs()] != 1 || uses[d.rhs()] != 1) {
      dp = plan_dot(*op, target, axis_, threads_);
      continue;
    }
    dot_loads_.emplace(d.lhs()->def, op);
    dot_loads_.emplace(d.rhs()->def, op);
  }
  homes_ = std::make_unique<Homes>(fn, axis_, threads_, [this](const ir::Op& dot) -> const Layout& {
    return dots_.at(&dot).acc;
  });
  for (auto& [op, plan] : dots_) plan_wgmma_operands(plan, *op, *homes_);
  plan_loops(*fn.body);
}

void LoweringPlan::plan_loops(const ir::Region& r) {
  for (const ir::Op* op : r.ops) {
    for (const ir::Region* sub : op->regions) plan_loops(*sub);
    if (op->kind != ir::OpKind::For) continue;
    LoopPlan p = plan_loop(*op, *this);
    if (p.kind == LoopKind::Plain) continue;
    if (p.kind == LoopKind::WarpSpecialized) {  // the kernel's one pair of roles
      if (ws_loop_)
        p.kind = LoopKind::CpAsyncRing;
      else
        ws_loop_ = op;
    }
    for (const ir::Op* dot : p.dots()) dots_.at(dot).ring = op;
    for (const HeldOperand& h : p.held) dots_.at(h.dot).ring = op;
    for (const RingFeed& f : p.feeds) {
      ring_ops_[f.load.load] = op;
      if (f.load.transposed) {
        // The dot reads the transpose: that permute is the ring's too.
        const ir::DotOp d(f.dot);
        ring_ops_[(f.is_a ? d.lhs() : d.rhs())->def] = op;
      }
    }
    loops_.emplace(op, std::move(p));
  }
}

const DotPlan& LoweringPlan::dot(const ir::Op& dot) const {
  auto it = dots_.find(&dot);
  TESSERA_CHECK(it != dots_.end(), "no plan for a dot");
  return it->second;
}

bool LoweringPlan::has_lean_ring() const {
  for (const auto& [op, loop] : loops_)
    if (((loop.kind == LoopKind::CpAsyncRing || loop.kind == LoopKind::WarpSpecialized) &&
         dot(*loop.feeds[0].dot).kind == DotKind::Wgmma) ||
        loop.kind == LoopKind::RegisterRing)
      return true;
  return false;
}

const ir::TensorMapParam& LoweringPlan::tma_store(const ir::Op& op) const {
  auto it = tma_stores_.find(&op);
  TESSERA_CHECK(it != tma_stores_.end(), op.loc.str(),
                ": desc_store reached the lowering, but TMA cannot store it on ", target_.name,
                " (the `descriptors` step expands such stores)");
  return it->second;
}

const LoopPlan& LoweringPlan::loop(const ir::Op& loop) const {
  auto it = loops_.find(&loop);
  return it == loops_.end() ? plain_ : it->second;
}

std::string LoweringPlan::str() const {
  const auto names = ir::value_names(fn_);
  std::ostringstream os;
  os << "// plans of '" << fn_.name << "' for " << target_.name
     << ", num_warps = " << options_.num_warps << ", num_stages = " << options_.num_stages << "\n";
  auto value = [&](const ir::Value* v, std::string_view what) {
    if (!v->type.is_tile()) return;
    os << name_of(names, v) << " = " << what << " : " << v->type.str() << "  "
       << (homes_->is_free(v) ? std::string("free") : homes_->home(v).str()) << "\n";
  };
  ir::walk(fn_.body, [&](const ir::Op* op) {
    for (const ir::Value* r : op->results) value(r, op->name());
    for (const ir::Region* region : op->regions)
      for (const ir::Value* a : region->args) value(a, std::string(op->name()) + " argument");
    if (op->kind == ir::OpKind::Dot)
      os << "  dot " << name_of(names, op->result()) << ": " << dot(*op).str() << "\n";
    if (op->kind == ir::OpKind::DescStore && tma_stores_.count(op))
      os << "  desc_store at " << op->loc.str() << ": tma_store " << tma_store(*op).str() << "\n";
    if (op->kind == ir::OpKind::For && loop(*op).kind != LoopKind::Plain)
      os << "  loop over " << name_of(names, op->regions[0]->args[0]) << ": "
         << loop(*op).str(names) << "\n";
  });
  return os.str();
}

}  // namespace tessera::lower
