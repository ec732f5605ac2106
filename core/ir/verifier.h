/// \file The tile IR verifier: checks every promise ops.h and ir.h make about a module.
///
/// Structure: operand, result and region counts from ops.def; parent pointers; SSA dominance
/// (an operand is defined earlier in its region, or earlier in an enclosing region, or is an
/// argument of an enclosing region); tile shapes are positive powers of two; `yield` and
/// `condition` end the regions of `for`, `if`, `while`, `reduce_generic` and `scan_generic` (a
/// function body needs no terminator) and carry the types their op expects. Typing: the rules of
/// each op kind (verifier_*.cpp, one file per op family).
///
/// Diagnostics are MLIR-like and go through the op's location (Location::str()):
///   g.cpp:12: error: 'dot' op expects operand #1 of shape [K, N] = [32, 64], got [16, 64]
///   <unknown>: error: 'yield' op is not allowed at function top level
/// Function-level problems read `<loc>: error: function 'name' ...`.
#pragma once

#include <string>
#include <vector>

#include "ir.h"

namespace tessera::ir {

/// Throws tessera::Error(ErrorKind::User) with the first diagnostic.
void verify(const Module& module);
void verify(const Function& fn);

/// Every diagnostic, in walk order; empty when the IR is valid.
std::vector<std::string> verify_all(const Module& module);
std::vector<std::string> verify_all(const Function& fn);

}  // namespace tessera::ir
