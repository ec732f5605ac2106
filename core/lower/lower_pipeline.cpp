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
/// A descriptor load copied by TMA (RingLoad::tma, sm_90+) takes the copies' place too, with an
/// mbarrier per stage instead of cp.async groups: thread 0 initializes the S mbarriers before
/// the loop; where iteration j's copies are issued (and iteration j exists), thread 0 arms stage
/// j % S's mbarrier with the stage's bytes (mbarrier_arrive_tx) and issues the boxes (tma_load,
/// the descriptor's offsets evaluated at iteration j); iteration i waits for its stage's phase,
/// parity (i / S) & 1, the i / S-th use of that mbarrier. Every copy issued is waited for by its
/// iteration, so after the loop thread 0 invalidates the mbarriers (mbarrier_inval) and the
/// buffer is released like the stages'.
///
/// A warp-specialized ring (LoopKind::WarpSpecialized) splits the copies from the compute: the
/// kernel is a warp_specialize whose first role, the kernel's warps, runs the whole body and
/// whose second, a producer warpgroup, runs only the loop's copies (Lowerer::open_roles). Before
/// the roles split, thread 0 initializes each stage's *full* mbarrier (the producer's arrival
/// with the stage's bytes) and *empty* one (an arrival per consumer warpgroup). The producer's
/// first thread computes the loop's bounds and each iteration's box coordinates again (Shifted
/// over the whole kernel: the consumers' values are not visible to it), waits for iteration j's
/// stage to be empty (parity ((j / S) & 1) ^ 1: the first use passes), arms *full* and issues
/// the boxes. The consumers wait on *full* as the ring does, run the dot, and once the wgmma
/// group that read a stage has retired, each warpgroup's first thread arrives on its *empty*.
/// No barrier in the loop: the mbarriers order everything. After the loop, the consumers meet at
/// their named barrier and thread 0 invalidates the 2 S mbarriers.
///
/// A TMA ring shared by a cluster (LoopPlan::cluster, docs/design.md "Thread-block clusters"):
/// each stage has an *empty* mbarrier in the plain ring too, counting one arrival per reader per
/// program of the cluster, and each program's readers arrive on it in every program (remote
/// arrivals). An operand with a slice map whose box is the same in every program (decided at run
/// time from every program's coordinates, computed before the loop where no iteration changes
/// them) is copied by slices, each program its rank's rows to all (multicast); otherwise whole,
/// locally. The plain ring frees the stage of iteration i - 1 and refills that of iteration i - 2
/// (S - 2 ahead). The cluster meets after the mbarriers' initialization and at the kernel's end
/// (Lowerer::at_exit), after which the mbarriers go.
#include <algorithm>
#include <cmath>
#include <optional>

#include "core/ir/ops.h"
#include "core/lower/ring_cluster.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

/// A ring's state while its loop is emitted: the stage buffers of every fed operand, the held
/// operands, and the loop's bounds and extra carried values (the stages read and written, the
/// iterations done).
struct Ring : LoopExtension {
  Ring(Lowerer& lw, const ir::Op& loop, const LoopPlan& plan)
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
          const int buf =
              lw.new_buffer(v->type.dtype, plan.stages * (stage_size[0] + stage_size[1]));
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

  /// Do the stages have *empty* mbarriers beside their *full* ones?
  bool empties() const { return ws || plan.cluster > 1; }

  /// Stores the held operands; prefetches stages 0 .. prefetch-1.
  std::vector<ir::Value*> before(ir::Value* lb_, ir::Value* ub_, ir::Value* step_) override {
    ir::ForOp f(&loop);
    lb = lb_, ub = ub_, step = step_;
    for (const HeldOperand& h : plan.held) {
      ir::DotOp d(h.dot);
      Operand o =
          store_wgmma_operand(lw, lw.plan().dot(*h.dot), h.is_a, h.is_a ? d.lhs() : d.rhs());
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
      return {lw.const_int(DType::i32, 0), lw.const_int(DType::i32, 0),
              lw.const_int(DType::i32, 0)};
    }
    if (bars >= 0) {
      lw.guarded(first_thread(), [&] {
        for (int s = 0; s < plan.stages; ++s) {
          lw.b().create(OpKind::MbarrierInit,
                        {lw.const_int(DType::i32, s), lw.const_int(DType::i32, 1)}, {},
                        {{attr::kBuffer, int64_t{bars}}});
          if (plan.cluster > 1)  // each program of the cluster frees the stage once
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
      if (plan.cluster > 1) {
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

  const RingLoad& load(size_t i) const { return plan.feeds[i].load; }

  /// True in thread 0, which issues the TMA copies and initializes the mbarriers.
  ir::Value* first_thread() {
    return lw.at_entry("tid==0", [&] {
      return lw.emit(OpKind::CmpEq, {lw.tid(), lw.const_int(DType::i32, 0)},
                     Type::scalar(DType::i1));
    });
  }

  /// Thread 0 arms mbarrier `slot` with the stage's bytes and copies the TMA operands of
  /// iteration `it` (which `at` evaluates) into stage `slot`, if `valid` (the iteration exists).
  /// Shared by a cluster, the copies of the loop's iteration count `j` (null before the loop: a
  /// stage's first use) first wait until every program of the cluster has freed the stage (the
  /// use's phase of *empty*, parity ((j / S) & 1) ^ 1, which passes at once on the first;
  /// free_previous frees it).
  void issue_tma(Shifted& at, ir::Value* it, ir::Value* slot, ir::Value* valid, ir::Value* j) {
    if (bars < 0) return;
    // The coordinates first, outside the branch: `at` keeps the values it computes.
    std::vector<std::vector<ir::Value*>> coords = tma_coords_of(at);
    lw.guarded(lw.and_(first_thread(), valid), [&] {
      if (plan.cluster > 1 && j) {
        const Type i32 = Type::scalar(DType::i32);
        ir::Value* stages = lw.const_int(DType::i32, plan.stages);
        ir::Value* empty = lw.add(slot, stages);
        ir::Value* one = lw.const_int(DType::i32, 1);
        ir::Value* uses = lw.emit(OpKind::Div, {j, stages}, i32);
        lw.b().create(OpKind::MbarrierWait,
                      {empty, lw.emit(OpKind::Xor, {lw.and_(uses, one), one}, i32)}, {},
                      {{attr::kBuffer, int64_t{bars}}});
      }
      copy_stage(coords, slot, it);
    });
  }

  /// (A plain ring shared by a cluster; after the barrier that follows iteration i - 1's reads)
  /// Thread 0 frees the stage iteration i - 1 read in every program of the cluster; its refill
  /// comes an iteration later (LoopPlan::prefetch is S - 2).
  void free_previous() {
    const Type i1 = Type::scalar(DType::i1), i32 = Type::scalar(DType::i32);
    ir::Value* zero = lw.const_int(DType::i32, 0);
    ir::Value* wrap = lw.emit(OpKind::CmpEq, {read, zero}, i1);
    ir::Value* previous = lw.emit(OpKind::Where,
                                  {wrap, lw.const_int(DType::i32, plan.stages - 1),
                                   lw.emit(OpKind::Sub, {read, lw.const_int(DType::i32, 1)}, i32)},
                                  i32);
    lw.guarded(lw.and_(first_thread(), lw.emit(OpKind::CmpGt, {count, zero}, i1)), [&] {
      cluster->free_everywhere(lw.add(previous, lw.const_int(DType::i32, plan.stages)));
    });
  }

  /// Each TMA-fed operand's box coordinates at the iteration `at` evaluates (empty for others).
  std::vector<std::vector<ir::Value*>> tma_coords_of(Shifted& at) {
    std::vector<std::vector<ir::Value*>> coords(plan.feeds.size());
    for (size_t i = 0; i < plan.feeds.size(); ++i)
      if (load(i).tma) coords[i] = tma_coords(lw, load(i), at);
    return coords;
  }

  /// Arms mbarrier `slot` with the stage's bytes and copies the TMA operands' boxes at `coords`
  /// (iteration `it`'s) into stage `slot` (by the thread that runs it). Shared by a cluster, an
  /// operand with a slice map whose box is the same in every program of the cluster is copied
  /// by slices: this program copies its rank's rows to all of them; every program's *full*
  /// mbarrier expects the whole stage either way.
  void copy_stage(const std::vector<std::vector<ir::Value*>>& coords, ir::Value* slot,
                  ir::Value* it) {
    lw.b().create(OpKind::MbarrierArriveTx, {slot, lw.const_int(DType::i32, stage_bytes)}, {},
                  {{attr::kBuffer, int64_t{bars}}});
    const std::vector<ir::Value*> same =
        cluster ? cluster->same_boxes(coords, it) : std::vector<ir::Value*>{};
    for (size_t i = 0; i < plan.feeds.size(); ++i) {
      if (!load(i).tma) continue;
      ir::Value* stage = lw.mul(slot, lw.const_int(DType::i32, stage_size[i]));
      if (!load(i).slice) {
        copy_boxes(i, coords[i], stage, slot, false);
        continue;
      }
      lw.guarded(same[i], [&] { copy_boxes(i, coords[i], stage, slot, true); });
      ir::Value* differ =
          lw.emit(OpKind::Xor, {same[i], lw.const_int(DType::i1, 1)}, same[i]->type);
      lw.guarded(differ, [&] { copy_boxes(i, coords[i], stage, slot, false); });
    }
  }

  /// Copies fed operand i's block at `coords` into its stage at element `stage`, completing on
  /// mbarrier `slot`: whole, into this program's stage, or (`shared`) this program's slice of
  /// rows (slice map) into the stage of every program of the cluster.
  void copy_boxes(size_t i, const std::vector<ir::Value*>& coords, ir::Value* stage,
                  ir::Value* slot, bool shared) {
    const ir::TensorMapParam& map = shared ? *load(i).slice : *load(i).tma;
    const int64_t box_elems = load(i).tma->box_bytes() / ir::dtype_bytes(map.dtype);
    std::vector<ir::Value*> at = coords;
    if (shared) {  // slice `rank`: rows rank x box[0] on, at element rank x (its elements)
      ir::Value* rank = lw.emit(OpKind::ClusterRank, {}, Type::scalar(DType::i32));
      at[0] = lw.add(at[0], lw.mul(rank, lw.const_int(DType::i32, map.box[0])));
      stage = lw.add(stage, lw.mul(rank, lw.const_int(DType::i32, box_elems / plan.cluster)));
    }
    for (int c = 0; c < map.copies; ++c) {
      // Box c of a row wider than the swizzle span: wgmma's column block c.
      std::vector<ir::Value*> operands = {
          c ? lw.add(stage, lw.const_int(DType::i32, c * box_elems)) : stage, slot};
      operands.insert(operands.end(), at.begin(), at.end());
      if (c)
        operands.back() = lw.add(operands.back(), lw.const_int(DType::i32, c * map.box.back()));
      std::vector<ir::Attribute> attrs = {{attr::kBarrier, int64_t{bars}},
                                          {attr::kBuffer, int64_t{ops[i].tile.buffer}},
                                          {attr::kMap, shared ? slice_maps[i] : maps[i]}};
      if (shared) {
        operands.push_back(lw.const_int(DType::i32, (int64_t{1} << plan.cluster) - 1));
        attrs.push_back({attr::kMulticast, int64_t{1}});
      }
      lw.b().create(OpKind::TmaLoad, operands, {}, std::move(attrs));
    }
  }

  /// (Warp-specialized) Before the roles split: thread 0 initializes each stage's *full*
  /// mbarrier (one arrival: the producer's, with the stage's bytes) and *empty* one (one arrival
  /// per consumer warpgroup) and fences them for the async proxy; the workgroup meets.
  void open_stages() {
    Lowerer::InsertPointGuard guard(lw);
    lw.b().set_insertion_before(lw.roles_op());
    const Type i1 = Type::scalar(DType::i1);
    ir::Value* first = lw.emit(OpKind::CmpEq, {lw.tid(), lw.const_int(DType::i32, 0)}, i1);
    lw.guarded(first, [&] {
      const int64_t consumer_groups = lw.threads() / 128 * plan.cluster;
      for (int s = 0; s < plan.stages; ++s)
        for (const auto& [index, count] :
             {std::pair<int64_t, int64_t>{s, 1}, {plan.stages + s, consumer_groups}})
          lw.b().create(OpKind::MbarrierInit,
                        {lw.const_int(DType::i32, index), lw.const_int(DType::i32, count)}, {},
                        {{attr::kBuffer, int64_t{bars}}});
      lw.b().create(OpKind::FenceAsyncShared, {}, {});
    });
    lw.b().create(OpKind::Barrier, {}, {});  // every thread: the roles have not split yet
    if (plan.cluster > 1) lw.b().create(OpKind::ClusterBarrier, {}, {});  // as the ring's
  }

  /// (Warp-specialized) The producer's role: its register limit lowered, its first thread
  /// computes the loop's bounds and runs its iterations: the j-th waits until stage j % S is
  /// empty (the phase its previous use freed: parity ((j / S) & 1) ^ 1, which passes at once on
  /// the first use), arms the stage's *full* mbarrier and issues its boxes.
  void emit_producer() {
    ir::ForOp f(&loop);
    Lowerer::InsertPointGuard guard(lw);
    lw.b().set_insertion_end(lw.producer_region());
    lw.b().create(OpKind::SetMaxNReg, {}, {},
                  {{attr::kIncrease, int64_t{0}}, {attr::kRegisters, lw.registers().producer}});
    const Type i1 = Type::scalar(DType::i1), i32 = Type::scalar(DType::i32);
    ir::Value* issuer =
        lw.emit(OpKind::CmpEq, {lw.tid(), lw.const_int(DType::i32, lw.threads())}, i1);
    lw.guarded(issuer, [&] {
      Shifted at(lw, *f.body(), nullptr, /*outside=*/true);
      ir::Value* lo = at.scalar(f.lower());
      ir::Value* hi = at.scalar(f.upper());
      ir::Value* step = at.scalar(f.step());
      hoist_tma_coords(at, plan, false);
      if (cluster) cluster->prepare();
      ir::Op* l = lw.b().create(OpKind::For, {lo, hi, step, lw.const_int(DType::i32, 0)}, {i32});
      ir::Region* body = lw.b().add_region(l);
      ir::Value* iv = lw.out_module().add_arg(body, lo->type);
      ir::Value* j = lw.out_module().add_arg(body, i32);
      lw.b().set_insertion_end(body);
      at.set_iv(iv);
      ir::Value* stages = lw.const_int(DType::i32, plan.stages);
      ir::Value* slot = lw.emit(OpKind::Rem, {j, stages}, i32);
      ir::Value* uses = lw.emit(OpKind::Div, {j, stages}, i32);
      ir::Value* one = lw.const_int(DType::i32, 1);
      ir::Value* parity = lw.emit(OpKind::Xor, {lw.and_(uses, one), one}, i32);
      lw.b().create(OpKind::MbarrierWait, {lw.add(slot, stages), parity}, {},
                    {{attr::kBuffer, int64_t{bars}}});
      copy_stage(tma_coords_of(at), slot, iv);
      lw.b().create(OpKind::Yield, {lw.add(j, one)}, {});
      lw.b().set_insertion_after(l);
    });
  }

  /// (Warp-specialized) A stage whose wgmma group has retired is free again: the first thread
  /// of each consumer warpgroup (whose reads the retirement counts) arrives on its *empty*
  /// mbarrier. An async dot's wait retired the previous iteration's group (none before the
  /// second iteration); a synchronous dot's, this iteration's.
  void free_stage() {
    const Type i1 = Type::scalar(DType::i1), i32 = Type::scalar(DType::i32);
    ir::Value* leader = lw.at_entry("tid%128==0", [&] {
      ir::Value* lane = lw.and_(lw.tid(), lw.const_int(DType::i32, 127));
      return lw.emit(OpKind::CmpEq, {lane, lw.const_int(DType::i32, 0)}, i1);
    });
    ir::Value* stage = read;
    ir::Value* when = leader;
    if (plan.async_dot) {
      ir::Value* zero = lw.const_int(DType::i32, 0);
      ir::Value* wrap = lw.emit(OpKind::CmpEq, {read, zero}, i1);
      stage = lw.emit(OpKind::Where,
                      {wrap, lw.const_int(DType::i32, plan.stages - 1),
                       lw.emit(OpKind::Sub, {read, lw.const_int(DType::i32, 1)}, i32)},
                      i32);
      when = lw.and_(leader, lw.emit(OpKind::CmpGt, {count, zero}, i1));
    }
    lw.guarded(when, [&] {
      ir::Value* empty = lw.add(stage, lw.const_int(DType::i32, plan.stages));
      if (cluster) return cluster->free_everywhere(empty);
      lw.b().create(OpKind::MbarrierArriveTx, {empty, lw.const_int(DType::i32, 0)}, {},
                    {{attr::kBuffer, int64_t{bars}}});
    });
  }
  /// The induction variable `n` iterations after `from`.
  ir::Value* iteration(ir::Value* from, int64_t n) {
    return n ? lw.add(from, lw.mul(step, lw.const_int(step->type.dtype, n))) : from;
  }

  /// Stores registers `r` of operand i (in its load's layout) into the stage at element `stage`.
  void store(size_t i, const Regs& r, ir::Value* stage) {
    if (kind == DotKind::CoopMat)
      lw.store_padded(
          r, load(i).operand_layout(), coop[i].buffer,
          coop_offset[i] ? lw.add(stage, lw.const_int(DType::i32, coop_offset[i])) : stage,
          coop[i].tile);
    else
      store_tile(lw, ops[i].tile, ops[i].row_dim, r, load(i).operand_layout(), stage);
  }

  /// Closes the iteration's cp.async group (nothing for a ring without copies).
  void commit() {
    if (copies) lw.b().create(OpKind::CpAsyncCommit, {}, {});
  }

  /// Loads the registers of the operands that go through registers for the iteration
  /// prefetch + `next` after `iv` (iteration count `count`; 0 and 0 before the loop) into ahead[].
  void load_registers(ir::Value* iv, ir::Value* count, int next) {
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

  /// Waits for this iteration's stage; prefetches the iteration S - 1 ahead here, or (async dot)
  /// after the dot, in next().
  void enter(ir::Value* iv, const std::vector<ir::Value*>& extra) override {
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

  /// Records operand `is_a` of `dot` as this iteration's dot reads it.
  void set_staged(const ir::Op* dot, bool is_a, const Operand& o) {
    StagedDot& s = staged[dot];
    (is_a ? s.a : s.b) = o;
    (is_a ? s.fed_a : s.fed_b) = true;
  }

  /// The operand the dot reads this iteration: stage `read` of fed operand i's ring.
  void stage_reads(size_t i) {
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

  /// Copies iteration i + prefetch into stage `write` (or stores the registers loaded for it),
  /// which iteration i + prefetch - stages read: every thread is past that read (a barrier
  /// since); then loads the registers of the iteration after. With `reads`, also stages this
  /// iteration's reads, operand by operand.
  void prefetch(bool reads) {
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
    if (plan.cluster > 1) free_previous();
    issue_tma(at, it, write, valid, j);
    commit();
    // One stage: the dot reads what was just stored (the loads of the next iteration follow).
    if (plan.stages == 1) lw.barrier();
    load_registers(iv, count, 1);
  }

  /// An async dot's wait retired this warpgroup's wgmma of the previous iteration; after a
  /// barrier every warpgroup's has retired, and its stage is refilled.
  std::vector<ir::Value*> next() override {
    if (ws)
      free_stage();
    else if (plan.async_dot) {
      lw.barrier();
      prefetch(false);
    }
    auto advance = [&](ir::Value* s) {
      ir::Value* n = lw.add(s, lw.const_int(DType::i32, 1));
      ir::Value* wrap = lw.emit(OpKind::CmpEq, {n, lw.const_int(DType::i32, plan.stages)},
                                Type::scalar(DType::i1));
      return lw.emit(OpKind::Where, {wrap, lw.const_int(DType::i32, 0), n}, n->type);
    };
    std::vector<ir::Value*> extra = {advance(read), advance(write),
                                     lw.add(count, lw.const_int(DType::i32, 1))};
    for (const Regs& r : ahead) extra.insert(extra.end(), r.begin(), r.end());
    return extra;
  }

  /// An async dot's last group is still in flight: wait for it and read the accumulators from
  /// the wait. The copies of iterations past the end are in flight too: land them before the
  /// buffers are used again (an enclosing loop's next prologue, or as scratch: they are released),
  /// after every thread's last read.
  void after() override {
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

  /// Rebinds the loop result `r` (the async dot's accumulator) to its values after a
  /// wgmma_wait 0. The wait is unconditional: where the loop did not run it has nothing to wait
  /// for. (Waiting only where the loop ran made ptxas 13.0 serialize every wgmma of the kernels
  /// whose loops carry registers: it could not tell that the path skipping the wait had no wgmma
  /// in flight.)
  void wait_for(const ir::Value* r) {
    Regs acc = lw.regs(r, lw.plan().dot(*plan.feeds[0].dot).acc);
    std::vector<Type> types;
    for (ir::Value* v : acc) types.push_back(v->type);
    ir::Op* w = lw.b().create(OpKind::WgmmaWait, acc, types, {{attr::kPending, int64_t{0}}});
    lw.define_tile(r, lw.plan().dot(*plan.feeds[0].dot).acc,
                   Regs(w->results.begin(), w->results.end()));
  }

  /// The operands a ring dot reads this iteration (null: the ring feeds it none).
  const StagedDot* staged_for(const ir::Op& dot) const {
    auto it = staged.find(&dot);
    return it == staged.end() ? nullptr : &it->second;
  }

  Lowerer& lw;
  const ir::Op& loop;
  const LoopPlan& plan;
  DotKind kind;                 ///< the fed dots' kind (one, unless all are wgmma)
  bool ws;                      ///< LoopKind::WarpSpecialized: a producer role issues the copies
  std::vector<Operand> ops;     ///< per fed operand: its stage tile (stage 0 at element 0)
  CoopStage coop[2];            ///< a cooperative-matrix dot's stage tiles instead, in one buffer
  int64_t coop_offset[2] = {};  ///< ... from these elements (A's stages, then B's)
  bool copies = false;          ///< some operand arrives by cp.async (else no groups are committed)
  bool registers = false;       ///< some operand goes through registers
  std::vector<int64_t> maps;    ///< per fed operand: its tensor map (TMA), or -1
  std::vector<int64_t> slice_maps;  ///< per fed operand: its slice map (LoopPlan::cluster), or -1
  /// Shared by a cluster: what crosses its programs.
  std::optional<ClusterRing> cluster;
  int64_t stage_bytes = 0;          ///< the bytes TMA writes into one stage (its mbarrier's phase)
  int bars = -1;                    ///< the stages' mbarriers (a buffer of S i64), if TMA copies
  std::vector<int64_t> stage_size;  ///< per fed operand: elements per stage
  std::vector<int> held_buffers;    ///< the held operands' tiles
  /// Per dot: the operands as this iteration's dot reads them.
  std::unordered_map<const ir::Op*, StagedDot> staged;
  /// Of each operand that goes through registers: its registers of the iteration whose copies
  /// come next (carried by the loop; loaded one iteration ahead of their store).
  std::vector<Regs> ahead;
  ir::Value *lb = nullptr, *ub = nullptr, *step = nullptr;
  ir::Value *iv = nullptr, *read = nullptr, *write = nullptr, *count = nullptr;
};

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
