/// \file Constant folding: evaluates pure ops whose operands are all constants.
#pragma once

#include "core/ir/ir.h"

namespace tessera::passes {

/// Replaces (in place) every pure op whose operands are all `constant` ops (scalars, or tiles
/// with every element equal) by the `constant` it evaluates to. Elementwise ops are evaluated by
/// the host interpreter's own code (core/interp/evaluate.h), so a folded constant has the bits the
/// interpreter computes for the op (a NaN is kept as some NaN: a constant holds no payload).
/// Undefined cases stay as they are: integer division or remainder by zero (and the overflowing
/// signed MIN / -1), shifts by a negative count or >= the bit width, float->int casts of NaN or
/// out-of-range values, and bitcasts from or to a NaN (its payload is not kept by the text form).
/// Shape ops of uniform constants (splat, broadcast, expand_dims, reshape, permute, cat of equal
/// halves) fold to a tile constant. Returns true if anything changed.
bool fold_constants(ir::Module& m);

}  // namespace tessera::passes
