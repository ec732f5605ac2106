/// \file Reads the tile IR's text form (printer.h documents the syntax) back into a Module.
///
/// It accepts exactly what the printer writes, plus free whitespace and `//` comments, and a few
/// conveniences for hand-written IR (golden tests):
///  - values may have any name `%[A-Za-z0-9_]+`; names are unique per function;
///  - an op may use a value defined later in the function (the parser resolves it at the end of
///    the function), so that the verifier, not the parser, reports dominance errors;
///  - `loc(...)` may be left out: the op (or function) then gets the location of its own text,
///    `<source_name>:<line>:<col>`, so diagnostics point into the IR file;
///  - a region without arguments may leave out its `^():` line;
///  - attribute dicts (of ops, parameters and functions) may list their names in any order (they
///    are sorted), and a function may write an empty `attributes {}`.
/// The parser builds structure only; verify() checks it.
#pragma once

#include <memory>
#include <string_view>

#include "ir.h"

namespace tessera::ir {

/// Parses a module. Throws tessera::Error(ErrorKind::User) whose message is
/// `<source_name>:<line>:<col>: error: <what was expected>`.
std::unique_ptr<Module> parse(std::string_view text, std::string_view source_name = "<input>");

}  // namespace tessera::ir
