/// \file Internal to canonicalize: the rewrite signature, shared helpers, and the arithmetic
/// rewrites defined in canonicalize_arith.cpp (the driver's table lists them all).
#pragma once

#include "core/ir/ir.h"
#include "core/passes/rewrite.h"

namespace tessera::passes::canon {

/// A rewrite: looks at one op and, if it applies, changes the IR and returns true.
using Pattern = bool (*)(ir::Op*);

/// Replaces `op`'s one result by `v` and erases `op`; false (and no change) if the types differ.
bool replace_with(ir::Op* op, ir::Value* v);
/// Turns `op` into a constant; false if `s` does not have the result's dtype.
bool replace_with_constant(ir::Op* op, const Scalar& s);
/// The op of `kind` defining `v`, or null.
ir::Op* def_of(const ir::Value* v, ir::OpKind kind);

bool constant_right(ir::Op* op);           ///< commutative op(c, x) -> op(x, c)
bool double_negation(ir::Op* op);          ///< neg(neg x), not(not x) -> x
bool additive_identity(ir::Op* op);        ///< x + 0, 0 + x, x - 0 (floats: -0.0, +0.0 only)
bool multiplicative_identity(ir::Op* op);  ///< x * 1, 1 * x, x / 1; integer x * 0 -> 0
bool bitwise_identity(ir::Op* op);         ///< and/or/xor with 0 or all ones, shifts by 0
bool self_inverse(ir::Op* op);             ///< integer x - x, xor(x, x) -> 0
bool self_compare(ir::Op* op);             ///< integer compares of x with itself

}  // namespace tessera::passes::canon
