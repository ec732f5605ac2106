/// \file A ring's TMA copies, their mbarriers, the warp-specialized producer and a ring shared by
/// a cluster (lower_pipeline.cpp emits the rest of the ring).
///
/// A descriptor load copied by TMA (RingLoad::tma, sm_90+) takes the cp.async copies' place, with
/// an mbarrier per stage instead of cp.async groups: thread 0 initializes the S mbarriers before
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
#include <cstdint>
#include <utility>
#include <vector>

#include "core/ir/ops.h"
#include "core/lower/ring.h"

namespace tessera::lower::detail {

using ir::DType;
using ir::OpKind;
using ir::Type;

void Ring::issue_tma(Shifted& at, ir::Value* it, ir::Value* slot, ir::Value* valid, ir::Value* j) {
  if (bars < 0) return;
  // The coordinates first, outside the branch: `at` keeps the values it computes.
  std::vector<std::vector<ir::Value*>> coords = tma_coords_of(at);
  lw.guarded(lw.and_(first_thread(), valid), [&] {
    if (cluster && j) {
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

void Ring::free_previous() {
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

std::vector<std::vector<ir::Value*>> Ring::tma_coords_of(Shifted& at) {
  std::vector<std::vector<ir::Value*>> coords(plan.feeds.size());
  for (size_t i = 0; i < plan.feeds.size(); ++i)
    if (load(i).tma) coords[i] = tma_coords(lw, load(i), at);
  return coords;
}

void Ring::copy_stage(const std::vector<std::vector<ir::Value*>>& coords, ir::Value* slot,
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
    ir::Value* differ = lw.emit(OpKind::Xor, {same[i], lw.const_int(DType::i1, 1)}, same[i]->type);
    lw.guarded(differ, [&] { copy_boxes(i, coords[i], stage, slot, false); });
  }
}

void Ring::copy_boxes(size_t i, const std::vector<ir::Value*>& coords, ir::Value* stage,
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
    if (c) operands.back() = lw.add(operands.back(), lw.const_int(DType::i32, c * map.box.back()));
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

void Ring::open_stages() {
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
  if (cluster) lw.b().create(OpKind::ClusterBarrier, {}, {});  // as the ring's
}

void Ring::emit_producer() {
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

void Ring::free_stage() {
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

}  // namespace tessera::lower::detail
