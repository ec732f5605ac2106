/// \file Constant folding's evaluator: one elementwise op on scalar operands, computed by the
/// interpreter's own code (elementwise.cpp, math.cpp, cast.cpp), so that a folded constant is
/// exactly what the interpreter computes for the op it replaces.
#pragma once

#include <optional>
#include <span>

#include "core/interp/value.h"
#include "core/ir/ir.h"

namespace tessera::interp {

/// Whether evaluate_elementwise computes `kind`: every `kElementwise` row of ops.def except
/// ptr_add (addresses are not constants).
bool evaluates(ir::OpKind kind);

/// Whether ops.h leaves `op` undefined for these operand values although the interpreter defines
/// a result: integer division or remainder by zero, MIN / -1 and MIN % -1 of a signed dtype, a
/// shift count >= the bit width, and a float -> integer cast of NaN or of a value out of range.
/// A device may compute something else there, so folding leaves such an op to run.
bool is_undefined(const ir::Op& op, std::span<const RuntimeValue> operands);

/// The interpreter's result of elementwise op `op` for scalar `operands` (one per operand of
/// `op`, each of shape {} and of that operand's type): a scalar of the result's dtype. Nullopt
/// for a kind `evaluates` rejects and where is_undefined holds.
std::optional<RuntimeValue> evaluate_elementwise(const ir::Op& op,
                                                 std::span<const RuntimeValue> operands);

}  // namespace tessera::interp
