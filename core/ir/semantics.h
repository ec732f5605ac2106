/// \file The executable definition of the math ops: one function per `kMath` row of ops.def.
///
/// The tile interpreter, the SIMT interpreter and constant folding all evaluate a math op through
/// these functions, so the three cannot disagree: a new math row gets its case here once.
#pragma once

#include "ir.h"

namespace tessera::ir {

/// The double-precision function of a unary math op kind (exp ... ceil, every `kMath` row of
/// arity 1); its result is rounded once to the operand's dtype. Internal error for any other kind.
using MathFn = double (*)(double);
MathFn math_fn(OpKind kind);

/// The same for a binary math op kind (a `kMath` row of arity 2): f(x, y) in double, rounded once
/// to the operands' dtype. Internal error for any other kind.
using MathFn2 = double (*)(double, double);
MathFn2 math_fn2(OpKind kind);

}  // namespace tessera::ir
