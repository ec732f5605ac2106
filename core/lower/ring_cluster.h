/// \file Internal to the ring lowering (lower_pipeline.cpp): what a TMA ring shared by a
/// thread-block cluster (LoopPlan::cluster > 1; docs/design.md, "Thread-block clusters") does
/// across programs: every program's box coordinates, the test whether a box is the same in all of
/// them, the arrivals on every program's *empty* mbarriers, and the cluster's meeting at the
/// kernel's end.
#pragma once

#include <vector>

#include "core/lower/ring_copies.h"

namespace tessera::lower::detail {

/// Hoists (Shifted::hoist) the box coordinates of `plan`'s TMA-fed operands (`sliced`: only of
/// those with a slice map) into `at`.
void hoist_tma_coords(Shifted& at, const LoopPlan& plan, bool sliced);

/// The cross-program part of one ring shared by a cluster, its mbarriers in buffer `bars` (S
/// *full* ones, then S *empty* ones).
class ClusterRing {
 public:
  /// Registers the meeting at the kernel's end (Lowerer::at_exit): no program may leave while
  /// another can still arrive on its mbarriers (copies into its stages were all waited for by its
  /// own iterations); then thread 0 invalidates the 2 S mbarriers. Their buffer is never released
  /// for reuse: remote arrivals may reach it until then.
  ClusterRing(Lowerer& lw, const ir::Op& loop, const LoopPlan& plan, int bars);

  /// (Before the loop, where the issuing thread computes) The id along x of each program of the
  /// cluster (x - cluster_rank + r: the cluster's programs are consecutive along x), and what of
  /// their box coordinates no iteration changes, computed here once.
  void prepare();
  /// Per fed operand with a slice map: is its box at iteration `it` (this program's coordinates
  /// `coords`, by fed operand) the same in every program of the cluster (i1; null for the
  /// others)? Every program computes every program's coordinates, so all take the same branch.
  std::vector<ir::Value*> same_boxes(const std::vector<std::vector<ir::Value*>>& coords,
                                     ir::Value* it);
  /// Arrives on the *empty* mbarrier at index `empty` of every program of the cluster (its own
  /// included): this program is done with the stage.
  void free_everywhere(ir::Value* empty);

 private:
  Lowerer& lw_;
  const ir::Op& loop_;
  const LoopPlan& plan_;
  int bars_;
  std::vector<ir::Value*> x_;             ///< per program of the cluster: its id along x
  std::vector<Shifted::Values> hoisted_;  ///< ... and its hoisted values (prepare)
};

}  // namespace tessera::lower::detail
