/// \file Common-subexpression elimination of pure ops and loads, scoped by regions.
#pragma once

#include "core/ir/ir.h"

namespace tessera::passes {

/// Merges pure ops without regions that have the same kind, operands, attributes (floats
/// compared by their bits, so -0.0 and 0.0 stay apart) and result types: the later one's
/// results are replaced by the earlier one's. Scoped: an op computed in an enclosing region is
/// reused inside nested regions, never the other way round, and never across sibling regions.
/// Non-volatile tile loads merge the same way while nothing in between may have written memory
/// (a store, an atomic, a barrier, an impure asm, a print or assert, or a loop holding one
/// around the later load); a store marked attr::kDisjoint lets loads of its group merge across
/// it. Returns true if anything changed.
bool eliminate_common_subexpressions(ir::Module& m);

}  // namespace tessera::passes
