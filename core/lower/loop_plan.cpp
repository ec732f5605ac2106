/// \file Loop plans (plan.h): whether a loop's dot operands can be prefetched into a ring of
/// shared buffers (by cp.async, or through registers), which loads, in what layout, and how many
/// stages fit.
#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_set>

#include "core/ir/ops.h"
#include "core/lower/mma_operand.h"
#include "core/lower/plan.h"
#include "core/lower/tma.h"

namespace tessera::lower {
namespace {

using ir::DType;
using ir::OpKind;

bool is_body_value(const ir::Region& body, const ir::Value* v) {
  if (v->is_arg()) return v->owner == &body;
  return v->def->parent == &body;
}

/// Does `v` change from one iteration of the loop to the next (a body argument, or computed from
/// one)?
bool varies(const ir::Region& body, const ir::Value* v) {
  if (v->is_arg()) return v->owner == &body;
  if (v->def->parent != &body) return false;
  for (const ir::Value* x : v->def->operands)
    if (varies(body, x)) return true;
  return false;
}

/// Can `v` be evaluated at another iteration: from outside the loop, the induction variable, or
/// freely recomputable ops of such values?
bool shiftable(const ir::Region& body, const ir::Value* v) {
  if (!is_body_value(body, v)) return true;
  if (v->is_arg()) return v == body.args[0];
  if (!is_free_kind(v->def->kind)) return false;
  for (const ir::Value* x : v->def->operands)
    if (!shiftable(body, x)) return false;
  return true;
}

int uses(const ir::Region& body, const ir::Value* v) {
  int n = 0;
  ir::walk(&body, [&](const ir::Op* op) {
    for (const ir::Value* x : op->operands) n += x == v;
  });
  return n;
}

bool is_zero_constant(const ir::Value* v) {
  if (!v->def || v->def->kind != OpKind::Constant) return false;
  ir::ConstantOp c(v->def);
  return c.is_float() ? c.float_value() == 0.0 && !std::signbit(c.float_value())
                      : c.int_value() == 0;
}

/// The load behind dot operand `v` (v itself or its transpose), if its pointers and mask can be
/// evaluated at later iterations.
std::optional<RingLoad> find_load(const LoweringPlan& plan, const ir::ForOp& f,
                                  const ir::Value* v) {
  const ir::Region& body = *f.body();
  RingLoad p;
  if (v->def && v->def->kind == OpKind::Permute && v->def->parent == &body &&
      v->def->ints_attr(attr::kOrder) == std::vector<int64_t>{1, 0} && uses(body, v) == 1) {
    p.transposed = true;
    v = v->def->operand(0);
  }
  if (v->def && v->def->kind == OpKind::DescLoad && v->def->parent == &body && uses(body, v) == 1) {
    // (kept only on TMA targets, passes::expand_descriptors) A TMA copy of the block at the
    // prefetched iteration's offsets: every operand must be evaluable there.
    for (const ir::Value* x : v->def->operands)
      if (!shiftable(body, x)) return std::nullopt;
    p.tma = plan_tma(plan.function(), *v->def, plan.target(), nullptr);
    if (!p.tma || p.tma->rank() != 2) return std::nullopt;
    // The box's first element along the innermost dimension a multiple of 16 bytes: the H200
    // faulted (CUDA_ERROR_ILLEGAL_INSTRUCTION) on a box at an innermost coordinate of 340 bytes
    // and ran every one at a multiple of 16 (device runs 3 to 5); other offsets go by loads.
    const ir::DescOperands d = ir::DescLoadOp(v->def).desc();
    const int64_t inner = plan.axis().get(d.offset(d.rank - 1)).divisibility.at(0);
    if (inner * ir::dtype_bytes(p.tma->dtype) % 16 != 0) return std::nullopt;
    p.load = v->def;
    return p;
  }
  if (!v->def || v->def->kind != OpKind::Load || v->def->parent != &body || uses(body, v) != 1)
    return std::nullopt;
  const ir::Op& load = *v->def;
  ir::LoadOp ld(&load);
  if (load.int_attr_or(attr::kVolatile, 0) != 0) return std::nullopt;
  if (ld.other() && !is_zero_constant(ld.other())) return std::nullopt;
  if (ld.mask() && !shiftable(body, ld.mask())) return std::nullopt;
  const ir::Value* ptr = ld.ptr();
  for (size_t i = 0; i < f.iter_args().size(); ++i) {
    if (ptr != f.iter_args()[i]) continue;
    // A carried pointer tile: its next value must be ptr_add(it, loop-invariant increment).
    const ir::Value* next = body.terminator()->operand(i);
    if (!next->def || next->def->kind != OpKind::PtrAdd || next->def->operand(0) != ptr)
      return std::nullopt;
    p.inc = next->def->operand(1);
    if (varies(body, p.inc) || !shiftable(body, p.inc)) return std::nullopt;
    p.init = f.inits()[i];
    if (!plan.homes().is_free(p.init)) return std::nullopt;
    p.iter_arg = static_cast<int>(i);
  }
  if (p.iter_arg < 0 && !shiftable(body, ptr)) return std::nullopt;
  p.load = &load;
  return p;
}

/// Plans `p` to go through registers: loaded as wide as the source allows along its contiguous
/// dimension, in a layout whose stores into the operand's swizzled tile are conflict-free.
void via_registers(RingLoad& p, const LoweringPlan& plan, const DotPlan& dp, bool is_a) {
  ir::LoadOp ld(p.load);
  const ir::Type& t = p.load->result()->type;
  const int elem = ir::dtype_bytes(t.dtype);
  // The source's contiguous dimension (the pointers' longer contiguous run; ties: the last).
  const AxisInfo& info = plan.axis().get(ld.ptr());
  const int fast = info.contiguity[0] > info.contiguity[1] ? 0 : 1;
  const int vec = static_cast<int>(
      access_width(plan.axis(), blocked(t.shape, {fast, 1 - fast}, 16 / elem, plan.threads()),
                   ld.ptr(), ld.mask(), ld.other()));
  // In the operand's coordinates (the load's, transposed when the dot reads its transpose).
  const ir::Shape shape = p.transposed ? ir::Shape{t.shape[1], t.shape[0]} : t.shape;
  const int op_fast = p.transposed ? 1 - fast : fast;
  int row_dim = 0;
  const detail::SmemTile tile = detail::wgmma_tile(dp, is_a, shape, 0, 0, &row_dim);
  // Stores run along the tile's columns (its contiguous dimension), 16 bytes at most.
  Layout l = staging_layout(shape, op_fast, vec, 1 - row_dim, 16 / elem, elem, plan.threads(),
                            plan.target().subgroup_size, [&](const std::vector<int64_t>& c) {
                              return tile.offset(c[static_cast<size_t>(row_dim)],
                                                 c[static_cast<size_t>(1 - row_dim)]) *
                                     elem;
                            });
  p.via_registers = true;
  p.layout = p.transposed ? permute(l, {1, 0}) : l;
  p.width = access_width(plan.axis(), p.layout, ld.ptr(), ld.mask(), ld.other());
}

/// The registers a load going through registers keeps live across iterations (0 for copies): its
/// values (4-byte words where loaded in vectors of at least 4 bytes; one per 8-bit value, which
/// are unpacked) and a 64-bit address per load.
int64_t carried_registers(const RingLoad& p, int64_t threads) {
  if (!p.via_registers) return 0;
  const int64_t elem = ir::dtype_bytes(p.load->result()->type.dtype);
  const int64_t values = std::max<int64_t>(1, p.load->result()->type.numel() / threads);
  const int64_t words = elem > 1 && p.width * elem >= 4 ? values * elem / 4 : values;
  return words + 2 * values / p.width;
}

/// How the ring moves `p`, which feeds operand A (`is_a`) or B of the dot planned `dp`: 16-byte
/// cp.async copies where the operand lies in shared memory as its source does; else, for wgmma,
/// through registers in the load's home (which the homes chose for the stores into the operand's
/// layout). False: the ring cannot move it.
bool plan_copies(RingLoad& p, const LoweringPlan& plan, const DotPlan& dp, bool is_a) {
  const ir::Value* v = p.load->result();
  if (p.tma) {
    // TMA writes each box's rows (the source's innermost dimension) swizzled as wgmma reads an
    // operand contiguous along that dimension; the boxes of a wider row are its column blocks.
    if (dp.kind != DotKind::Wgmma) return false;
    p.layout = plan.homes().home(v);
    p.width = p.tma->box.back();
    const WgmmaOperand& o = is_a ? dp.wa : dp.wb;
    const int op_fast = p.transposed ? 0 : 1;  // the innermost dimension, in the operand's
    return o.mn_major == (op_fast == (is_a ? 0 : 1)) && o.swizzle == p.tma->swizzle;
  }
  ir::LoadOp ld(p.load);
  // Copies go straight to shared memory and their pointers are recomputed, so they may use any
  // layout: 16 bytes per thread along the home's contiguous dimension (threads past the tile hold
  // copies and skip).
  p.layout = plan.homes().home(v);
  const int fast = fast_dim(p.layout);
  if (fast >= 0)
    p.layout = blocked(v->type.shape, {fast, 1 - fast},
                       static_cast<int>(16 / ir::dtype_bytes(v->type.dtype)), plan.threads());
  p.width = access_width(plan.axis(), p.layout, ld.ptr(), ld.mask(), ld.other());
  bool copies = p.width * ir::dtype_bytes(v->type.dtype) == 16;
  if (dp.kind != DotKind::Wgmma) return copies;
  // wgmma reads the tile as the copies write it: contiguous where the copies run.
  const WgmmaOperand& o = is_a ? dp.wa : dp.wb;
  copies = copies && o.mn_major == (fast_dim(p.operand_layout()) == (is_a ? 0 : 1));
  if (!copies) via_registers(p, plan, dp, is_a);
  return true;
}

}  // namespace

Layout RingLoad::operand_layout() const {
  return transposed ? permute(layout, {1, 0}) : layout;
}

namespace {

/// The most stages, from `want` down to `least`, whose buffers (`per_stage` bytes each) fit beside
/// `reserve` bytes in the target's shared memory; least - 1 when none does.
int fit_stages(int want, int least, int64_t per_stage, int64_t reserve, const target::Target& t) {
  int stages = want;
  while (stages >= least && stages * per_stage + reserve > t.max_shared_bytes) --stages;
  return stages;
}

/// The register ring of a loop whose one dot runs on cooperative matrices: both operands loaded
/// in their homes an iteration ahead, two padded stages each, or one; plain if none fits beside the
/// accumulator's conversion scratch (one matrix per subgroup) and, unless the ring is lean (its
/// buffers reused after the loop), a 4-byte conversion of the whole result.
LoopPlan plan_register_ring(const ir::ForOp& f, const ir::Op* dot, const LoweringPlan& plan) {
  LoopPlan plain;
  const DotPlan& dp = plan.dot(*dot);
  ir::DotOp d(dot);
  std::optional<RingLoad> a = find_load(plan, f, d.lhs()), b = find_load(plan, f, d.rhs());
  if (!a || !b) return plain;
  const int64_t elem = ir::dtype_bytes(d.lhs()->type.dtype);
  int64_t per_stage = 0;
  for (RingLoad* l : {&*a, &*b}) {
    ir::LoadOp ld(l->load);
    l->via_registers = true;
    l->layout = plan.homes().home(l->load->result());
    l->width = access_width(plan.axis(), l->layout, ld.ptr(), ld.mask(), ld.other());
    const Layout ol = l->operand_layout();
    per_stage += padded_tile(ol.shape, fast_dim(ol), static_cast<int>(elem)).size * elem;
  }
  const MatTiling& t = *dp.acc.mats;
  const int64_t reserve =
      t.m * t.n * 4 * (plan.threads() / t.lanes) +
      (plan.lean_rings() ? 0 : staging_elements(dot->result()->type.shape, 4) * 4);
  // Two stages (one barrier per iteration); else one (a second barrier between the stores and
  // the dot), the loads still an iteration ahead.
  const int stages = fit_stages(2, 1, per_stage, reserve, plan.target());
  if (stages < 1) return plain;
  LoopPlan p;
  p.kind = LoopKind::RegisterRing;
  p.stages = stages;
  p.prefetch = stages - 1;
  p.feeds = {{dot, true, *a}, {dot, false, *b}};
  return p;
}

/// Can a producer role compute by itself what it needs of `loop`, its bounds and each fed
/// descriptor load's offsets? Yes when they are pure scalar ops (no regions, no inline assembly)
/// of the kernel's parameters and the induction variable, defined in the kernel's body or the
/// loop's: the producer lowers them again in its own role.
bool producer_can_compute(const ir::Op& loop, const std::vector<RingFeed>& feeds) {
  ir::ForOp f(&loop);
  const ir::Region* top = loop.parent;
  std::vector<const ir::Value*> pending = {f.lower(), f.upper(), f.step()};
  for (const RingFeed& feed : feeds) {
    const ir::DescOperands d = ir::DescLoadOp(feed.load.load).desc();
    for (int i = 0; i < d.rank; ++i) pending.push_back(d.offset(i));
  }
  std::unordered_set<const ir::Value*> seen;
  while (!pending.empty()) {
    const ir::Value* v = pending.back();
    pending.pop_back();
    if (!seen.insert(v).second || v == f.iv()) continue;
    if (v->type.is_tile()) return false;
    if (v->is_arg()) {
      if (v->owner != top) return false;  // a loop-carried value
      continue;                           // a parameter
    }
    const ir::Op& op = *v->def;
    if (op.parent != top && op.parent != f.body()) return false;
    if (!op.regions.empty() || !ir::has_trait(op.kind, ir::kPure) || op.kind == OpKind::InlineAsm)
      return false;
    for (const ir::Value* x : op.operands) pending.push_back(x);
  }
  return true;
}

/// Does `v` depend on a program id (so that programs may see different values)?
bool varies_by_program(const ir::Value* v) {
  std::vector<const ir::Value*> pending = {v};
  std::unordered_set<const ir::Value*> seen;
  while (!pending.empty()) {
    const ir::Value* x = pending.back();
    pending.pop_back();
    if (!seen.insert(x).second || !x->def) continue;
    if (x->def->kind == OpKind::ProgramId) return true;
    for (const ir::Value* o : x->def->operands) pending.push_back(o);
  }
  return false;
}

/// Plans `p` (a ring of TMA copies) for clusters of plan.cluster() programs where it can be (the
/// conditions at LoopPlan::cluster), each fed operand whose box's rows divide into slices of
/// whole 8-row swizzle periods given its slice map. False (and `p` unchanged) where no operand
/// can be shared.
bool plan_cluster(const ir::Op& loop, LoopPlan& p, const LoweringPlan& plan) {
  const int n = plan.cluster();
  ir::ForOp f(&loop);
  const ir::Region* top = loop.parent;
  if (n < 2 || !top || top->parent || !producer_can_compute(loop, p.feeds) ||
      varies_by_program(f.lower()) || varies_by_program(f.upper()) || varies_by_program(f.step()))
    return false;
  bool any = false;
  for (RingFeed& feed : p.feeds) {
    const ir::TensorMapParam& map = *feed.load.tma;
    if (map.rank() != 2 || map.box[0] % (8 * n) != 0) continue;
    feed.load.slice = map;
    feed.load.slice->box[0] /= n;
    any = true;
  }
  if (any) p.cluster = n;
  return any;
}

/// What a ring's dots need from it: the operands it copies (`feeds`), the loop-invariant ones
/// held before the loop, and the bytes and registers that decide how many stages fit.
struct Operands {
  std::vector<RingFeed> feeds;
  std::vector<HeldOperand> held;
  int64_t per_stage = 0;  ///< bytes of one stage of every fed operand
  int64_t fixed = 0;      ///< bytes of the held operands and of those stored from registers
  int64_t carried = 0;    ///< registers the copies carry through the loop
  int64_t acc_regs = 0;   ///< registers of the accumulators
  /// An operand made in the body (read from registers by wgmma, or stored by its dot): it
  /// changes every iteration, so no wgmma group may stay in flight into the next one.
  bool made_in_body = false;
};

/// The operands of the loop's dots, each fed by the ring, held, or made in the body; nullopt
/// where an operand can be none of these (mma.sync needs both fed; wgmma needs an operand loaded
/// in the body fed, as its load would otherwise wait in every iteration).
std::optional<Operands> plan_operands(ir::ForOp f, const std::vector<const ir::Op*>& dots,
                                      const LoweringPlan& plan, bool wgmma) {
  const ir::Region& body = *f.body();
  auto tile_bytes = [&](const ir::Value* v) {
    const int64_t bytes = v->type.numel() * ir::dtype_bytes(v->type.dtype);
    return wgmma ? (bytes + 1023) / 1024 * 1024 : bytes;  // wgmma tiles start 1024-aligned
  };
  Operands o;
  for (const ir::Op* dot : dots) {
    const DotPlan& dp = plan.dot(*dot);
    o.acc_regs += dp.acc.num_regs();
    ir::DotOp d(dot);
    for (const bool is_a : {true, false}) {
      const ir::Value* v = is_a ? d.lhs() : d.rhs();
      if (is_a && dp.a_registers) {  // wgmma reads it from registers
        o.made_in_body = true;
        continue;
      }
      std::optional<RingLoad> l = find_load(plan, f, v);
      if (l && plan_copies(*l, plan, dp, is_a)) {
        o.feeds.push_back({dot, is_a, *l});
        o.per_stage += tile_bytes(v);
        o.carried += carried_registers(*l, plan.threads());
        continue;
      }
      // mma.sync: both operands from the ring. wgmma: an operand loaded in the body must be
      // fed; one from outside the loop is held; one computed in the body is stored from
      // registers by its dot.
      const ir::Value* src = v->def && v->def->kind == OpKind::Permute ? v->def->operand(0) : v;
      const bool loaded =
          src->def && (src->def->kind == OpKind::Load || src->def->kind == OpKind::DescLoad);
      if (!wgmma || (loaded && is_body_value(body, src))) return std::nullopt;
      o.fixed += tile_bytes(v);
      if (is_body_value(body, v))
        o.made_in_body = true;
      else
        o.held.push_back({dot, is_a});
    }
  }
  return o;
}

/// The ring's kind, cluster and stages for its operands `o` (p.kind a plain ring on entry);
/// false where fewer than two stages fit.
bool plan_stages(const ir::Op& loop, const std::vector<const ir::Op*>& dots, const Operands& o,
                 const LoweringPlan& plan, bool wgmma, int num_stages, LoopPlan& p) {
  int64_t per_stage = o.per_stage;
  // num_stages buffers of the fed operands beside the others; room for one f32 accumulator
  // conversion, unless a lean wgmma ring counts on its buffers being reused after the loop.
  int64_t reserve = o.fixed;
  if (!wgmma || !plan.lean_rings())
    for (const ir::Op* dot : dots)
      reserve = std::max(reserve, o.fixed + staging_elements(dot->result()->type.shape, 4) * 4);
  // A stage copied by TMA has its mbarrier (one i64) beside its tiles.
  auto by_tma = [](const RingFeed& f) { return f.load.tma.has_value(); };
  const bool all_tma = std::all_of(p.feeds.begin(), p.feeds.end(), by_tma);
  if (std::any_of(p.feeds.begin(), p.feeds.end(), by_tma)) per_stage += 8;
  // Warp specialization, where asked and possible: a producer warpgroup issues the copies; each
  // stage has an *empty* mbarrier too.
  const ir::Region* top = loop.parent;
  if (loop.int_attr_or(attr::kWarpSpecialize, 0) && wgmma && all_tma && top && !top->parent &&
      plan.target().has(target::Cap::Wgmma) && producer_can_compute(loop, p.feeds)) {
    p.kind = LoopKind::WarpSpecialized;
    per_stage += 8;
  }
  // Copies shared by a cluster's programs: a plain ring's stages get their *empty* mbarriers too.
  if (all_tma && wgmma && plan_cluster(loop, p, plan) && p.kind != LoopKind::WarpSpecialized)
    per_stage += 8;
  p.stages = fit_stages(num_stages, 2, per_stage, reserve, plan.target());
  if (p.stages < 2) return false;
  p.prefetch = p.stages - 1;
  // A plain ring shared by a cluster refills the stage its iteration i - 2 read, which the other
  // programs freed an iteration ago, so that a program a little behind holds nobody up (refilling
  // the stage just freed, each waited for the slowest in every iteration: 18 % slower on the
  // H100). It needs three stages; with two, nothing is shared.
  if (p.cluster > 1 && p.kind != LoopKind::WarpSpecialized) {
    if (p.stages >= 3) {
      p.prefetch = p.stages - 2;
    } else {
      p.cluster = 1;
      for (RingFeed& feed : p.feeds) feed.load.slice.reset();
    }
  }
  return true;
}

}  // namespace

LoopPlan plan_loop(const ir::Op& loop, const LoweringPlan& plan) {
  LoopPlan plain;
  // tl::range's per-loop num_stages (the loop's attribute) replaces the launch option.
  const int num_stages =
      static_cast<int>(loop.int_attr_or(attr::kNumStages, plan.options().num_stages));
  if (num_stages < 2) return plain;
  ir::ForOp f(&loop);
  const ir::Region& body = *f.body();
  std::vector<const ir::Op*> dots;
  for (const ir::Op* op : body.ops)
    if (op->kind == OpKind::Dot) dots.push_back(op);
  if (dots.empty()) return plain;
  const DotKind kind = plan.dot(*dots[0]).kind;
  if (dots.size() == 1 && kind == DotKind::CoopMat) return plan_register_ring(f, dots[0], plan);
  if (!plan.target().has(target::Cap::CpAsync)) return plain;
  if (kind != DotKind::MmaSync && kind != DotKind::Wgmma) return plain;
  // Several dots share a ring only when all are wgmma (whose operands need not all be fed).
  for (const ir::Op* dot : dots)
    if (dots.size() > 1 && plan.dot(*dot).kind != DotKind::Wgmma) return plain;
  const bool wgmma = kind == DotKind::Wgmma;
  std::optional<Operands> o = plan_operands(f, dots, plan, wgmma);
  if (!o || o->feeds.empty()) return plain;
  // Registers carried through the loop beside the accumulators: past about 176 in all, ptxas
  // spills (measured over the bench and conformance kernels on sm_90a).
  if (o->carried > 0 && o->acc_regs + o->carried > 176) return plain;
  LoopPlan p;
  p.kind = LoopKind::CpAsyncRing;
  p.feeds = o->feeds;
  p.held = o->held;
  if (!plan_stages(loop, dots, *o, plan, wgmma, num_stages, p)) return plain;
  // An async wgmma keeps one group in flight into the next iteration: the ring refills the stage
  // of iteration i - 1 only after the dot of iteration i, whose wait retired it. Its result must
  // go nowhere but the next iteration, and it reads nothing that the next iteration stores.
  const ir::Value* result = dots[0]->result();
  if (wgmma && dots.size() == 1 && !o->made_in_body && uses(body, result) == 1 &&
      body.terminator() &&
      std::count(body.terminator()->operands.begin(), body.terminator()->operands.end(), result) ==
          1)
    p.async_dot = true;
  return p;
}

std::vector<const ir::Op*> LoopPlan::dots() const {
  std::vector<const ir::Op*> out;
  for (const RingFeed& f : feeds)
    if (std::find(out.begin(), out.end(), f.dot) == out.end()) out.push_back(f.dot);
  return out;
}

}  // namespace tessera::lower
