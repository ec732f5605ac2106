/// \file The state of a ring while its loop is emitted (LoopKind::CpAsyncRing, RegisterRing and
/// WarpSpecialized, planned in loop_plan.cpp): lower_pipeline.cpp emits its stages, copies and
/// reads; ring_tma.cpp its TMA copies, their mbarriers and the warp-specialized producer.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/lower/ring_cluster.h"

namespace tessera::lower::detail {

/// A ring's state while its loop is emitted: the stage buffers of every fed operand, the held
/// operands, and the loop's bounds and extra carried values (the stages read and written, the
/// iterations done).
struct Ring : LoopExtension {
  Ring(Lowerer& lw, const ir::Op& loop, const LoopPlan& plan);
  /// Stores the held operands; prefetches stages 0 .. prefetch-1.
  std::vector<ir::Value*> before(ir::Value* lb_, ir::Value* ub_, ir::Value* step_) override;
  /// Waits for this iteration's stage; prefetches the iteration S - 1 ahead here, or (async dot)
  /// after the dot, in next().
  void enter(ir::Value* iv, const std::vector<ir::Value*>& extra) override;
  /// An async dot's wait retired this warpgroup's wgmma of the previous iteration; after a
  /// barrier every warpgroup's has retired, and its stage is refilled.
  std::vector<ir::Value*> next() override;
  /// An async dot's last group is still in flight: wait for it and read the accumulators from
  /// the wait. The copies of iterations past the end are in flight too: land them before the
  /// buffers are used again (an enclosing loop's next prologue, or as scratch: they are released),
  /// after every thread's last read.
  void after() override;
  /// Do the stages have *empty* mbarriers beside their *full* ones?
  bool empties() const { return ws || plan.cluster > 1; }
  const RingLoad& load(size_t i) const { return plan.feeds[i].load; }
  /// True in thread 0, which issues the TMA copies and initializes the mbarriers.
  ir::Value* first_thread();
  /// The induction variable `n` iterations after `from`.
  ir::Value* iteration(ir::Value* from, int64_t n);
  /// Stores registers `r` of operand i (in its load's layout) into the stage at element `stage`.
  void store(size_t i, const Regs& r, ir::Value* stage);
  /// Closes the iteration's cp.async group (nothing for a ring without copies).
  void commit();
  /// Loads the registers of the operands that go through registers for the iteration
  /// prefetch + `next` after `iv` (iteration count `count`; 0 and 0 before the loop) into ahead[].
  void load_registers(ir::Value* iv, ir::Value* count, int next);
  /// Records operand `is_a` of `dot` as this iteration's dot reads it.
  void set_staged(const ir::Op* dot, bool is_a, const Operand& o);
  /// The operand the dot reads this iteration: stage `read` of fed operand i's ring.
  void stage_reads(size_t i);
  /// Copies iteration i + prefetch into stage `write` (or stores the registers loaded for it),
  /// which iteration i + prefetch - stages read: every thread is past that read (a barrier
  /// since); then loads the registers of the iteration after. With `reads`, also stages this
  /// iteration's reads, operand by operand.
  void prefetch(bool reads);
  /// Rebinds the loop result `r` (the async dot's accumulator) to its values after a
  /// wgmma_wait 0. The wait is unconditional: where the loop did not run it has nothing to wait
  /// for. (Waiting only where the loop ran made ptxas 13.0 serialize every wgmma of the kernels
  /// whose loops carry registers: it could not tell that the path skipping the wait had no wgmma
  /// in flight.)
  void wait_for(const ir::Value* r);
  /// The operands a ring dot reads this iteration (null: the ring feeds it none).
  const StagedDot* staged_for(const ir::Op& dot) const;

  // The TMA copies, their mbarriers and the warp-specialized producer (ring_tma.cpp).
  /// Thread 0 arms mbarrier `slot` with the stage's bytes and copies the TMA operands of
  /// iteration `it` (which `at` evaluates) into stage `slot`, if `valid` (the iteration exists).
  /// Shared by a cluster, the copies of the loop's iteration count `j` (null before the loop: a
  /// stage's first use) first wait until every program of the cluster has freed the stage (the
  /// use's phase of *empty*, parity ((j / S) & 1) ^ 1, which passes at once on the first;
  /// free_previous frees it).
  void issue_tma(Shifted& at, ir::Value* it, ir::Value* slot, ir::Value* valid, ir::Value* j);
  /// (A plain ring shared by a cluster; after the barrier that follows iteration i - 1's reads)
  /// Thread 0 frees the stage iteration i - 1 read in every program of the cluster; its refill
  /// comes an iteration later (LoopPlan::prefetch is S - 2).
  void free_previous();
  /// Each TMA-fed operand's box coordinates at the iteration `at` evaluates (empty for others).
  std::vector<std::vector<ir::Value*>> tma_coords_of(Shifted& at);
  /// Arms mbarrier `slot` with the stage's bytes and copies the TMA operands' boxes at `coords`
  /// (iteration `it`'s) into stage `slot` (by the thread that runs it). Shared by a cluster, an
  /// operand with a slice map whose box is the same in every program of the cluster is copied
  /// by slices: this program copies its rank's rows to all of them; every program's *full*
  /// mbarrier expects the whole stage either way.
  void copy_stage(const std::vector<std::vector<ir::Value*>>& coords, ir::Value* slot,
                  ir::Value* it);
  /// Copies fed operand i's block at `coords` into its stage at element `stage`, completing on
  /// mbarrier `slot`: whole, into this program's stage, or (`shared`) this program's slice of
  /// rows (slice map) into the stage of every program of the cluster.
  void copy_boxes(size_t i, const std::vector<ir::Value*>& coords, ir::Value* stage,
                  ir::Value* slot, bool shared);
  /// (Warp-specialized) Before the roles split: thread 0 initializes each stage's *full*
  /// mbarrier (one arrival: the producer's, with the stage's bytes) and *empty* one (one arrival
  /// per consumer warpgroup) and fences them for the async proxy; the workgroup meets.
  void open_stages();
  /// (Warp-specialized) The producer's role: its register limit lowered, its first thread
  /// computes the loop's bounds and runs its iterations: the j-th waits until stage j % S is
  /// empty (the phase its previous use freed: parity ((j / S) & 1) ^ 1, which passes at once on
  /// the first use), arms the stage's *full* mbarrier and issues its boxes.
  void emit_producer();
  /// (Warp-specialized) A stage whose wgmma group has retired is free again: the first thread
  /// of each consumer warpgroup (whose reads the retirement counts) arrives on its *empty*
  /// mbarrier. An async dot's wait retired the previous iteration's group (none before the
  /// second iteration); a synchronous dot's, this iteration's.
  void free_stage();

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
  /// Shared by a cluster: what crosses its programs (engaged exactly when LoopPlan::cluster > 1).
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

}  // namespace tessera::lower::detail
