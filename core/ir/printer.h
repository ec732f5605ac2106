/// \file The tile IR's text form (generic syntax); parser.h reads back exactly what this writes.
///
/// One op per line, two spaces of indentation per region level:
///
///   func @gelu_kernel(%x: ptr<f32> {divisibility = 16}, %y: ptr<f32>, %n: i32) loc("g.cpp":3:6) {
///     %0 = program_id {axis = 0} : i32 loc("g.cpp":4:13)
///     %1 = for %a, %b, %c, %init ({
///     ^(%2: i32, %3: tile<1024xf32>):
///       %4 = add %3, %3 : tile<1024xf32> loc("g.cpp":9:5)
///       yield %4 loc("g.cpp":9:5)
///     }) : tile<1024xf32> loc("g.cpp":8:3)
///     store %p, %v, %m loc(unknown)
///   }
///
/// - An op is `%r0, %r1 = name %operands {attrs} ({regions}) : result types loc(...)`; an op
///   without results has neither `%... =` nor `: types`; empty attribute dicts are omitted.
/// - A region starts with `^(%arg: T, ...):` (`^():` without arguments) at its op's indentation;
///   its ops are indented one level more; `}` closes it; several regions are comma-separated.
/// - Values: a function parameter prints as `%<name>` when its name is an identifier
///   ([A-Za-z_][A-Za-z0-9_]*) that is unique among the parameters and not of the form
///   `arg<digits>`, else as `%arg<index>`. Every other value (op results, region arguments) is
///   numbered `%0, %1, ...` per function in print order (an op's results before its regions'
///   arguments). A value not defined in the printed function prints as `%<undef>`.
/// - Attributes `{name = value, ...}` are sorted by name. A value is one of
///     integer   `16`, `-3`
///     float     always with `.`, `e`, or spelled `inf`, `-inf`, `nan`: `0.5`, `2.0`, `1e+20`;
///               the shortest text that reads back to the same double (std::to_chars)
///     string    `"a\"b\\c\n\t\01"`: `\"`, `\\`, `\n`, `\t`, other control bytes as `\xx` hex
///     int list  `[1, 0]`, `[]`
///     type      bare, as Type::str() writes it: `f32`, `ptr<f16>`, `tile<4x8xi32>`.
///   The forms are told apart by their first character: a digit or `-` starts a number, `"` a
///   string, `[` a list, a letter a type, except the float keywords `inf` and `nan` (no dtype is
///   spelled so). An attribute name that is not an identifier prints as a string.
/// - Locations: `loc("<file>":<line>:<col>)` (the file escaped like a string) or `loc(unknown)`.
/// - A function name that is not an identifier prints as `@"<escaped name>"`. A module prints its
///   functions one after another, separated by a blank line.
/// - Function attributes (Function::attrs, e.g. a SIMT function's, core/ir/simt.h) print after the
///   parameters as `attributes {name = value, ...}`, sorted by name, before the location; the
///   part is left out when there are none. The header stays one line:
///     func @k(%n: i32) attributes {stage = "simt", subgroup = 32, threads = 128} loc(unknown) {
#pragma once

#include <iosfwd>
#include <string>
#include <unordered_map>

#include "ir.h"

namespace tessera::ir {

/// How much to print. Without locations (dumps that are read or diffed by people: a changed
/// line number in a kernel's source then changes nothing) the text still parses, every op's
/// location unknown.
struct PrintOptions {
  bool locations = true;
};

/// The whole module: its functions separated by blank lines.
std::string print(const Module& module, const PrintOptions& options = {});
void print(std::ostream& os, const Module& module);
/// One function, ending in "}\n".
std::string print(const Function& fn, const PrintOptions& options = {});
/// The name print(fn) gives every value of `fn` ("%in0", "%12"), for texts that annotate the
/// printed IR (the lowering's plans).
std::unordered_map<const Value*, std::string> value_names(const Function& fn);
/// One op with its regions, for diagnostics. Values are numbered as print(Function) numbers them
/// (the outermost reachable region is walked); the arguments of that outermost region print as
/// `%arg<index>` because parameter names are not reachable from an op.
std::string print_op(const Op& op);

/// The text of one attribute value, as it appears in an attribute dict.
std::string print_attr_value(const AttrValue& value);
/// `loc("file":line:col)` or `loc(unknown)`.
std::string print_location(const Location& loc);

}  // namespace tessera::ir
