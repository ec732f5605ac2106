/// \file Tensor descriptors as masked pointer accesses: desc_load and desc_store (core/ir/ops.h)
/// rewritten into the loads and stores a Triton user writes by hand, for every target (on a
/// target with TMA the loads it can copy into a loop's ring are first kept for the loop planner,
/// core/lower/tma.h; the ring does not issue TMA copies yet, so they are expanded after it):
///
///   idx_d  = off_d + arange(0, B_d)                       one per dimension, [B_d]
///   in_d   = idx_d >= 0 && idx_d < dim_d
///   ptrs   = base + sum_d expand(idx_d * stride_d)        broadcast to the block
///   mask   = and_d expand(in_d)
///   load(ptrs, mask, 0) / store(ptrs, value, mask)
///
/// in the descriptor's index dtype (i32 or i64), so that the tile optimizer and the layout
/// planner see the same ops as in a kernel written with pointer tiles.
#pragma once

#include <functional>

#include "core/ir/ir.h"

namespace tessera::passes {

/// Rewrites every desc_load and desc_store of the module; returns true if there was one.
bool expand_descriptors(ir::Module& m);

/// Rewrites every desc_load and desc_store for which `keep` is false; returns true if there was
/// one. On a target with TMA the pipeline keeps the loads that TMA can copy into a loop's ring
/// (lower::plan_tma and lower::feeds_loop_dot) for the loop planner, and expands whatever it did
/// not take; with CompileOptions::tma_store, the stores lower::plan_tma_store accepts.
bool expand_descriptors(ir::Module& m, const std::function<bool(const ir::Op&)>& keep);

}  // namespace tessera::passes
