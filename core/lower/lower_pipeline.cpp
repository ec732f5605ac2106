/// \file The emission of a ring (LoopKind::CpAsyncRing and RegisterRing, planned in loop_plan.cpp).
/// The loop keeps num_stages shared buffers per dot operand: before it, stages 0 .. S-2 are
/// prefetched (one cp.async group each); each iteration waits for its own stage (cp_async_wait
/// S-2, barrier), prefetches iteration i + S - 1 into the stage iteration i - 1 read, and the dot
/// reads its fragments straight from stage i % S. An async wgmma dot (one group left in flight)
/// still reads stage i - 1 as iteration i begins: there the prefetch follows the dot, its wait
/// and a second barrier (the order Triton's pipeliner gives Hopper). Iterations past the end copy
/// nothing (zero fill). The loads' pointers and masks are recomputed for iteration j by
/// substituting lb + j * step for the induction variable, and init + j * inc for a loop-carried
/// pointer tile that starts at a free init and advances by a loop-invariant inc.
///
/// An operand that goes through registers (RingLoad::via_registers) takes the copies' place in
/// the same stages: where the others' copies of iteration i + S - 1 are issued, its registers of
/// that iteration (loaded one iteration earlier, carried by the loop) are stored, and the loads of
/// iteration i + S are issued, so that each load has an iteration's time to arrive.
///
/// TMA copies, the mbarriers of their stages, the warp-specialized producer and a ring shared by a
/// cluster are emitted in ring_tma.cpp; the ring's state is declared in ring.h.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/ir/ops.h"
#include "core/lower/ring.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

Ring::Ring(Lowerer& lw, const ir::Op& loop, const LoopPlan& plan)
    : lw(lw),
      loop(loop),
      plan(plan),
      kind(lw.plan().dot(*plan.feeds[0].dot).kind),
      ws(plan.kind == LoopKind::WarpSpecialized) {
  const size_t n = plan.feeds.size();
  ops.resize(n);
  stage_size.resize(n);
  ahead.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const RingFeed& f = plan.feeds[i];
    const DotPlan& dot = lw.plan().dot(*f.dot);
    ir::DotOp d(f.dot);
    const ir::Value* v = f.is_a ? d.lhs() : d.rhs();
    const RingLoad& l = f.load;
    Operand& o = ops[i];
    copies = copies || (!l.via_registers && !l.tma);
    registers = registers || l.via_registers;
    if (l.tma) {
      maps.push_back(lw.tensor_map(*l.tma));
      stage_bytes += l.tma->copies * l.tma->box_bytes();
    } else {
      maps.push_back(-1);
    }
    slice_maps.push_back(l.slice ? lw.tensor_map(*l.slice) : -1);
    if (kind == DotKind::CoopMat) {
      // Padded stages along the operand's home's contiguous dimension; A's and B's in one
      // buffer (A's first), which after the loop is one scratch buffer as large as both.
      const Layout ol = l.operand_layout();
      CoopStage& c = coop[i];
      c.tile = padded_tile(ol.shape, fast_dim(ol), ir::dtype_bytes(v->type.dtype));
      stage_size[i] = c.tile.size;
      if (i == 1) {
        coop_offset[1] = plan.stages * stage_size[0];
        const int buf = lw.new_buffer(v->type.dtype, plan.stages * (stage_size[0] + stage_size[1]));
        coop[0].buffer = coop[1].buffer = buf;
      }
      continue;
    }
    if (kind == DotKind::Wgmma) {
      // wgmma's tiles, each stage a whole number of KiB from a 1024-byte-aligned buffer.
      SmemTile probe = wgmma_tile(dot, f.is_a, v->type.shape, 0, 0, &o.row_dim);
      stage_size[i] = wgmma_stage_elements(probe, ir::dtype_bytes(v->type.dtype));
      const int buf = lw.new_buffer(v->type.dtype, plan.stages * stage_size[i]);
      o.tile = wgmma_tile(dot, f.is_a, v->type.shape, buf, 0, &o.row_dim);
      continue;
    }
    const int buf = lw.new_buffer(v->type.dtype, plan.stages * v->type.numel());
    o = make_operand(f.is_a, v->type.dtype, v->type.shape, fast_dim(l.operand_layout()), dot, buf,
                     0, lw.threads());
    stage_size[i] = o.tile.size();
  }
  // (Warp-specialized, or shared by a cluster: each stage's *full* mbarrier, then each one's
  // *empty* one.)
  if (stage_bytes) bars = lw.new_buffer(DType::i64, empties() ? 2 * plan.stages : plan.stages);
  if (plan.cluster > 1) cluster.emplace(lw, loop, plan, bars);
}

std::vector<ir::Value*> Ring::before(ir::Value* lb_, ir::Value* ub_, ir::Value* step_) {
  ir::ForOp f(&loop);
  lb = lb_, ub = ub_, step = step_;
  for (const HeldOperand& h : plan.held) {
    ir::DotOp d(h.dot);
    Operand o = store_wgmma_operand(lw, lw.plan().dot(*h.dot), h.is_a, h.is_a ? d.lhs() : d.rhs());
    held_buffers.push_back(o.tile.buffer);
    set_staged(h.dot, h.is_a, o);
  }
  if (ws) {
    open_stages();
    emit_producer();
    if (!plan.held.empty()) {  // wgmma reads the held operands through the async proxy
      lw.b().create(OpKind::FenceAsyncShared, {}, {});
      lw.barrier();
    }
    return {lw.const_int(DType::i32, 0), lw.const_int(DType::i32, 0), lw.const_int(DType::i32, 0)};
  }
  if (bars >= 0) {
    lw.guarded(first_thread(), [&] {
      for (int s = 0; s < plan.stages; ++s) {
        lw.b().create(OpKind::MbarrierInit,
                      {lw.const_int(DType::i32, s), lw.const_int(DType::i32, 1)}, {},
                      {{attr::kBuffer, int64_t{bars}}});
        if (cluster)  // each program of the cluster frees the stage once
          lw.b().create(
              OpKind::MbarrierInit,
              {lw.const_int(DType::i32, plan.stages + s), lw.const_int(DType::i32, plan.cluster)},
              {}, {{attr::kBuffer, int64_t{bars}}});
      }
      lw.b().create(OpKind::FenceAsyncShared, {}, {});
    });
    lw.barrier();
    // No program copies into another's stages, or arrives on its mbarriers, before that one
    // has initialized them.
    if (cluster) {
      lw.b().create(OpKind::ClusterBarrier, {}, {});
      cluster->prepare();
    }
  }
  for (int s = 0; s < plan.prefetch; ++s) {
    ir::Value* it = iteration(lb, s);
    ir::Value* valid = in_range(lw, it, ub, step);
    Shifted at(lw, *f.body(), it);
    ir::Value* j = lw.const_int(DType::i32, s);
    for (size_t i = 0; i < plan.feeds.size(); ++i) {
      ir::Value* stage = lw.const_int(DType::i32, s * stage_size[i]);
      if (load(i).via_registers)
        store(i, load_ahead(lw, load(i), at, j, valid), stage);
      else if (!load(i).tma)
        issue(lw, load(i), ops[i], at, j, stage, stage_size[i] & -stage_size[i], valid);
    }
    issue_tma(at, it, lw.const_int(DType::i32, s), valid, nullptr);
    commit();
  }
  std::vector<ir::Value*> extra = {lw.const_int(DType::i32, 0),
                                   lw.const_int(DType::i32, plan.prefetch),
                                   lw.const_int(DType::i32, 0)};
  load_registers(lb, lw.const_int(DType::i32, 0), 0);
  for (const Regs& r : ahead) extra.insert(extra.end(), r.begin(), r.end());
  return extra;
}

ir::Value* Ring::first_thread() {
  return lw.at_entry("tid==0", [&] {
    return lw.emit(OpKind::CmpEq, {lw.tid(), lw.const_int(DType::i32, 0)}, Type::scalar(DType::i1));
  });
}

ir::Value* Ring::iteration(ir::Value* from, int64_t n) {
  return n ? lw.add(from, lw.mul(step, lw.const_int(step->type.dtype, n))) : from;
}

void Ring::store(size_t i, const Regs& r, ir::Value* stage) {
  if (kind == DotKind::CoopMat)
    lw.store_padded(
        r, load(i).operand_layout(), coop[i].buffer,
        coop_offset[i] ? lw.add(stage, lw.const_int(DType::i32, coop_offset[i])) : stage,
        coop[i].tile);
  else
    store_tile(lw, ops[i].tile, ops[i].row_dim, r, load(i).operand_layout(), stage);
}

void Ring::commit() {
  if (copies) lw.b().create(OpKind::CpAsyncCommit, {}, {});
}

void Ring::load_registers(ir::Value* iv, ir::Value* count, int next) {
  bool any = false;
  for (const RingFeed& f : plan.feeds) any = any || f.load.via_registers;
  if (!any) return;
  ir::ForOp f(&loop);
  ir::Value* it = iteration(iv, plan.prefetch + next);
  ir::Value* valid = in_range(lw, it, ub, step);
  Shifted at(lw, *f.body(), it);
  ir::Value* j = lw.add(count, lw.const_int(DType::i32, plan.prefetch + next));
  for (size_t i = 0; i < plan.feeds.size(); ++i)
    if (load(i).via_registers) ahead[i] = load_ahead(lw, load(i), at, j, valid);
}

void Ring::enter(ir::Value* iv, const std::vector<ir::Value*>& extra) {
  this->iv = iv;
  read = extra.at(0);
  write = extra.at(1);
  count = extra.at(2);
  auto carried = extra.begin() + 3;
  for (Regs& r : ahead) {
    r.assign(carried, carried + static_cast<long>(r.size()));
    carried += static_cast<long>(r.size());
  }
  if (copies)
    lw.b().create(OpKind::CpAsyncWait, {}, {}, {{attr::kPending, int64_t{plan.prefetch - 1}}});
  if (bars >= 0) {
    // This iteration is the count / S-th use of its stage's mbarrier.
    const Type i32 = Type::scalar(DType::i32);
    ir::Value* uses = lw.emit(OpKind::Div, {count, lw.const_int(DType::i32, plan.stages)}, i32);
    ir::Value* parity = lw.emit(OpKind::And, {uses, lw.const_int(DType::i32, 1)}, i32);
    lw.b().create(OpKind::MbarrierWait, {read, parity}, {}, {{attr::kBuffer, int64_t{bars}}});
  }
  if (ws) {  // the stage is the producer's copy; nothing else to order
    for (size_t i = 0; i < plan.feeds.size(); ++i) stage_reads(i);
    return;
  }
  // wgmma reads the copies (and the held operands' stores) through the async proxy, where
  // TMA writes.
  if (kind == DotKind::Wgmma && (copies || registers || !plan.held.empty()))
    lw.b().create(OpKind::FenceAsyncShared, {}, {});
  lw.barrier();
  if (!plan.async_dot) return prefetch(true);
  for (size_t i = 0; i < plan.feeds.size(); ++i) stage_reads(i);
}

void Ring::set_staged(const ir::Op* dot, bool is_a, const Operand& o) {
  StagedDot& s = staged[dot];
  (is_a ? s.a : s.b) = o;
  (is_a ? s.fed_a : s.fed_b) = true;
}

void Ring::stage_reads(size_t i) {
  const RingFeed& f = plan.feeds[i];
  ir::Value* stage = lw.mul(read, lw.const_int(DType::i32, stage_size[i]));
  if (kind == DotKind::CoopMat) {
    CoopStage c = coop[i];
    c.base = coop_offset[i] ? lw.add(stage, lw.const_int(DType::i32, coop_offset[i])) : stage;
    (f.is_a ? staged[f.dot].ca : staged[f.dot].cb) = c;
    return;
  }
  Operand r = ops[i];
  if (kind == DotKind::Wgmma)
    r.read_base = stage;
  else
    prepare_reads(lw, r, stage);
  set_staged(f.dot, f.is_a, r);
}

void Ring::prefetch(bool reads) {
  ir::ForOp f(&loop);
  ir::Value* it = iteration(iv, plan.prefetch);
  ir::Value* valid = in_range(lw, it, ub, step);
  ir::Value* j = lw.add(count, lw.const_int(DType::i32, plan.prefetch));
  Shifted at(lw, *f.body(), it);
  for (size_t i = 0; i < plan.feeds.size(); ++i) {
    ir::Value* stage = lw.mul(write, lw.const_int(DType::i32, stage_size[i]));
    if (load(i).via_registers)
      store(i, ahead[i], stage);
    else if (!load(i).tma)
      issue(lw, load(i), ops[i], at, j, stage, stage_size[i] & -stage_size[i], valid);
    if (reads) stage_reads(i);
  }
  if (cluster) free_previous();
  issue_tma(at, it, write, valid, j);
  commit();
  // One stage: the dot reads what was just stored (the loads of the next iteration follow).
  if (plan.stages == 1) lw.barrier();
  load_registers(iv, count, 1);
}

std::vector<ir::Value*> Ring::next() {
  if (ws)
    free_stage();
  else if (plan.async_dot) {
    lw.barrier();
    prefetch(false);
  }
  auto advance = [&](ir::Value* s) {
    ir::Value* n = lw.add(s, lw.const_int(DType::i32, 1));
    ir::Value* wrap =
        lw.emit(OpKind::CmpEq, {n, lw.const_int(DType::i32, plan.stages)}, Type::scalar(DType::i1));
    return lw.emit(OpKind::Where, {wrap, lw.const_int(DType::i32, 0), n}, n->type);
  };
  std::vector<ir::Value*> extra = {advance(read), advance(write),
                                   lw.add(count, lw.const_int(DType::i32, 1))};
  for (const Regs& r : ahead) extra.insert(extra.end(), r.begin(), r.end());
  return extra;
}

void Ring::after() {
  if (plan.async_dot) {
    const ir::Op* y = ir::ForOp(&loop).body()->terminator();
    for (size_t i = 0; i < y->operands.size(); ++i)
      if (y->operand(i) == plan.feeds[0].dot->result()) wait_for(loop.results[i]);
  }
  if (copies) lw.b().create(OpKind::CpAsyncWait, {}, {}, {{attr::kPending, int64_t{0}}});
  lw.barrier();
  if (bars >= 0 && !cluster) {  // (shared by a cluster: ClusterRing meets at the exit)
    // Every copy issued was waited for by its iteration: the mbarriers are idle.
    lw.guarded(first_thread(), [&] {
      for (int s = 0; s < (ws ? 2 : 1) * plan.stages; ++s)
        lw.b().create(OpKind::MbarrierInval, {lw.const_int(DType::i32, s)}, {},
                      {{attr::kBuffer, int64_t{bars}}});
    });
    lw.release_buffer(bars);
  }
  if (kind == DotKind::CoopMat) return lw.release_buffer(coop[0].buffer);
  for (const Operand& o : ops) lw.release_buffer(o.tile.buffer);
  for (int buffer : held_buffers) lw.release_buffer(buffer);
}

void Ring::wait_for(const ir::Value* r) {
  Regs acc = lw.regs(r, lw.plan().dot(*plan.feeds[0].dot).acc);
  std::vector<Type> types;
  for (ir::Value* v : acc) types.push_back(v->type);
  ir::Op* w = lw.b().create(OpKind::WgmmaWait, acc, types, {{attr::kPending, int64_t{0}}});
  lw.define_tile(r, lw.plan().dot(*plan.feeds[0].dot).acc,
                 Regs(w->results.begin(), w->results.end()));
}

const StagedDot* Ring::staged_for(const ir::Op& dot) const {
  auto it = staged.find(&dot);
  return it == staged.end() ? nullptr : &it->second;
}

void Lowerer::lower_ring_loop(const ir::Op& op, const LoopPlan& plan) {
  Ring ring(*this, op, plan);
  rings_[&op] = &ring;
  emit_for(op, &ring);
  rings_.erase(&op);
}

const StagedDot* Lowerer::staged_operands(const ir::Op& ring_loop, const ir::Op& dot) const {
  auto it = rings_.find(&ring_loop);
  TESSERA_CHECK(it != rings_.end(), "a dot planned to read a ring outside its loop");
  return it->second->staged_for(dot);
}

}  // namespace tessera::lower::detail
