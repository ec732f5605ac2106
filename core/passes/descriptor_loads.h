/// \file Pointer-tile loads that feed a loop's dot, rewritten as tensor-descriptor loads where
/// that provably reads the same values, so that a target whose loop rings copy descriptor loads
/// by TMA (sm_90a) copies the seed's matmul source that way too.
///
/// The rewritten shape (either orientation; a rank-2 load whose one use is a dot of the loop
/// body, directly or through its transpose):
///
///   p0   = base + rows[:, None] * s_r + cols[None, :] * s_c    rows = r0 + arange(0, BR), ...
///   for (iv = 0; iv < n; iv += S) carries p = p0, p' = p + inc:
///     load(p, mask = rows'[:, None] < R & cols'[None, :] < C, other = +0)
///
/// where exactly one of rows', cols' is its pointer index plus the induction variable (the
/// other is the index itself) and inc == S * that index's stride, becomes
///
///   desc_load(base, dims (R, C), strides (s_r, s_c), offsets (r0 + iv, c0) or (r0, c0 + iv))
///
/// with the dimension of stride 1 innermost (s_r == 1: a descriptor of the transposed tensor,
/// its block permuted back). The two read the same values only where the indices are never
/// negative (the descriptor reads nothing below 0, the pointers would): every start (r0, c0, the
/// induction variable) must be provably >= 0 (lower::provably_nonneg), or the load is left as
/// written. The address arithmetic differs only where the 32-bit products wrap, which TMA (whose
/// address computation is 64-bit) does not.
///
/// Policy: only on targets with TMA, and only where lower::plan_tma accepts the descriptor (a
/// 16-byte aligned base parameter, strides of 16-byte multiples by the specialization's
/// divisibility facts) and it feeds the loop's dot (lower::feeds_loop_dot). The pipeline keeps
/// the module as it was before this pass and goes back to it where the loop plan does not copy
/// every rewritten load by TMA (passes::compile), so no other kernel changes.
#pragma once

#include "core/ir/ir.h"
#include "core/target/target.h"

namespace tessera::passes {

/// Rewrites the loads of `m` that the policy above selects; true if any.
bool pointer_loads_to_descriptors(ir::Module& m, const target::Target& target);

}  // namespace tessera::passes
