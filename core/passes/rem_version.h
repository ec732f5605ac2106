/// \file Remainder versioning: `%` keeps its left side's runs (so a load or store through it can
/// be vectorized, staged by cp.async, ...) in a copy of the kernel that runs where one run-time
/// test proves the left side non-negative.
///
/// Triton's tutorial matmul wraps its tile offsets with `(pid_n * BLOCK_N + arange(0, BLOCK_N)) %
/// N`. The axis analysis (core/lower/axis_info.h) keeps the runs of such a remainder only for a
/// non-negative left side: C's truncating `%` maps the run -N, -N + 1, ... to 0, -N + 1, ...
/// Here the sign is not provable from the IR (pid_n is a quotient by a difference of parameters'
/// functions), so the pass rewrites the kernel's body from the first such `%` to its end into
///
///   if (every left side's smallest element >= 0 and largest <= INT32_MAX) {
///     the same ops, each versioned `%` marked `nonneg` (its runs kept)
///   } else {
///     the ops as written
///   }
///
/// The test is computed once, before the `%`s, in 64-bit arithmetic from each left side's affine
/// form: a sum of scalars defined before the split (program ids, parameters, their quotients...),
/// each times a constant, plus index tiles (aranges through splat, broadcast, expand_dims,
/// reshape, permute, constant multiples) whose ranges are known. The smallest element is the
/// scalars' part plus the index tiles' smallest sum, the largest likewise; with both inside
/// [0, INT32_MAX] the 32-bit left side computes exact, non-negative values, so the fact holds for
/// every element. The test is sufficient, never optimistic: where it fails, the original code runs.
///
/// Policy: a `rem` of signed 32-bit integer tiles in the kernel's top-level body whose left side
/// is not provably non-negative, whose runs the fact would keep (the left side has runs, the
/// divisor divisibility and constancy of at least 2), whose value reaches the pointer of a load,
/// store or atomic, and whose affine form the test can take before the first such `%`. Other
/// kernels are left as they are. Both copies lower on their own; the lowering takes back the
/// shared memory of one copy's loop rings for the other's (Lowerer::new_buffer).
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "core/ir/ir.h"

namespace tessera::passes {

/// Versions each function of `m` whose remainders the policy above selects; true if any.
bool version_remainders(ir::Module& m);

/// The same split for other facts: where every value of `values` (signed 32-bit, over scalars
/// defined before top-level op `split` of `fn`'s body, index tiles and constants) has an affine
/// form, rewrites the body from `split` to its end into `if (every element of each value in [0,
/// INT32_MAX]) { a copy } else { as written }` and returns the map from the tail's values to
/// their copies in `then`; nullopt, changing nothing, otherwise.
std::optional<std::unordered_map<const ir::Value*, ir::Value*>> version_nonneg(
    ir::Module& m, ir::Function& fn, size_t split, const std::vector<ir::Value*>& values);

}  // namespace tessera::passes
