/// \file Dead-code elimination: ops, loop-carried values and branch results nobody needs.
#pragma once

#include "core/ir/ir.h"

namespace tessera::passes {

/// Removes what cannot affect memory, side effects or control: a liveness analysis starting
/// from the ops that must stay (stores, atomics, print/assert/assume, `while` loops, which may
/// not terminate) and from the control of the loops and branches around them. Removed:
///  - pure ops and loads whose results nothing live needs (also through chains and cycles);
///  - results of `for`/`if`/`while` that nothing live needs, with the matching operands of the
///    regions' terminators, and for loops the iteration argument and its init (an accumulator
///    whose final value is unused and that feeds nothing else disappears whole);
///  - whole `if` and `for` ops whose regions have no side effects and whose results are unused.
/// Returns true if anything changed.
bool eliminate_dead_code(ir::Module& m);

}  // namespace tessera::passes
