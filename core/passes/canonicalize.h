/// \file Canonicalization: small local rewrites to simpler or more regular IR, to a fixed point.
#pragma once

#include "core/ir/ir.h"

namespace tessera::passes {

/// Applies local rewrites until none applies (each one exact under the semantics of ops.h):
///  - shapes: splat(constant) -> tile constant; broadcast/expand_dims/reshape/permute of a splat
///    -> splat of the scalar (of a tile constant -> tile constant); broadcast, reshape or permute
///    (identity order) to the operand's own type -> the operand;
///  - casts: cast or bitcast to the same type -> operand; bitcast(bitcast x) -> bitcast x;
///  - arithmetic: neg(neg x), not(not x) -> x; integer x+0, 0+x, x-0, x*0 -> 0, x-x -> 0; float
///    x + (-0.0) and x - (+0.0) only (x + 0.0 maps -0.0 to +0.0); x*1, x/1; and with all ones or
///    zero, or/xor with zero, xor(x, x) -> 0, shifts by 0, ptr_add by 0;
///  - where with a constant condition or equal branches; integer compares of x with itself;
///  - constant operands of commutative ops move to the right-hand side;
///  - add(dot(a, b, zero), c) (either order) with a single use of the dot -> dot(a, b, c), which is
///    how `acc += tl::dot(a, b)` becomes one dot with the accumulator;
///  - multiple_of/max_contiguous of a constant -> the constant.
/// Returns true if anything changed.
bool canonicalize(ir::Module& m);

}  // namespace tessera::passes
