/// \file Single-trip versioning: a kernel that walks the same range in several loops, each
/// loading the same tiles (Triton's tutorial layer norm reads its row three times, in three
/// `for off in range(0, N, BLOCK)` loops), runs, where one run-time test proves that every such
/// loop makes exactly one trip, a copy of its code with the loops opened up: straight-line code in
/// which common-subexpression elimination (cse.h) merges the repeated loads, their conversions
/// and the arithmetic they share, so the row is read once and stays in registers.
///
///   if (lo < hi <= lo + step and the stores between the loops write none of the repeated loads'
///       bytes) {
///     the same ops, each such loop's body once with its induction variable = lo, its carried
///     values = their initial values; the stores and the repeated loads tagged `disjoint`
///   } else {
///     the ops as written
///   }
///
/// Policy: two or more `for` loops of the function's top-level body with the same lower bound,
/// the same upper bound (a 32-bit scalar, not a constant) and the same positive constant step,
/// where loads of one address form (core/passes/affine.h, the induction variable read as the lower
/// bound) occur in two of them. The split is at the first such loop. Stores between the loops
/// (outside them) must have address forms too, and each is tested against each repeated form at
/// run time (the byte ranges do not overlap, every 32-bit offset is exact); a store, atomic or
/// barrier between them that has no form leaves the loads unmerged across it (the loops are still
/// opened). Where the test fails (more than one trip, or overlapping memory: say, an in-place
/// kernel whose statistics land in its input), the original code runs. Other kernels are left as
/// they are.
#pragma once

#include "core/ir/ir.h"

namespace tessera::passes {

/// Versions each function of `m` that the policy above selects; true if any.
bool version_single_trips(ir::Module& m);

}  // namespace tessera::passes
