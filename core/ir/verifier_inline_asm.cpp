/// \file Verifier rules of inline_asm and inline_asm_impure (ops.h): the attributes, the shapes
/// of the tile IR's operands and results (or the SIMT IR's scalars, `pack` per value), and a
/// constraint string with one entry per register.
#include <bit>

#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {

void check_inline_asm(OpChecker& c) {
  c.str_attr(attr::kAsm, true);
  const std::string* constraints = c.str_attr(attr::kConstraints, true);
  const int64_t pack =
      c.op.find_attr(attr::kPack) ? c.int_attr_in(attr::kPack, 1, 16).value_or(1) : 1;
  if (!std::has_single_bit(static_cast<uint64_t>(pack)))
    c.fail("expects attribute 'pack' to be a power of two, got ", pack);
  if (c.op.results.empty()) c.fail("expects at least one result");
  if (c.failed()) return;
  for (const Value* v : c.op.operands)
    if (v->type.is_ptr || v->type.dtype == DType::i1)
      return (void)c.fail("expects operands of numeric dtypes, got ", v->type.str());
  for (const Value* v : c.op.results)
    if (v->type.is_ptr || v->type.dtype == DType::i1)
      return (void)c.fail("expects results of numeric dtypes, got ", v->type.str());
  // The tile IR has one value per operand and result; the SIMT IR `pack` scalars of each.
  const size_t per = c.simt ? static_cast<size_t>(pack) : 1;
  if (c.num_in() % per || c.op.results.size() % per)
    return (void)c.fail("expects operands and results in groups of pack = ", pack, ", got ",
                        c.num_in(), " and ", c.op.results.size());
  std::vector<DType> ins, outs;
  for (size_t i = 0; i < c.num_in(); i += per) {
    for (size_t k = 1; k < per; ++k)
      if (c.in(i + k) != c.in(i))
        return (void)c.fail("expects operands ", i, " to ", i + per - 1, " (one operand's ", per,
                            " elements) of one type, got ", c.in(i).str(), " and ",
                            c.in(i + k).str());
    ins.push_back(c.in(i).dtype);
  }
  for (size_t i = 0; i < c.op.results.size(); i += per) outs.push_back(c.out(i).dtype);
  const Type& shape_of = c.in(0);
  for (const Value* v : c.op.operands)
    if (v->type.shape != shape_of.shape || v->type.is_tile() != shape_of.is_tile())
      return (void)c.fail("expects operands of one shape, got ", shape_of.str(), " and ",
                          v->type.str());
  for (const Value* v : c.op.results)
    if (v->type.shape != shape_of.shape || v->type.is_tile() != shape_of.is_tile())
      return (void)c.fail("expects results of the operands' shape, got ", v->type.str(),
                          " for operands ", shape_of.str());
  if (!c.simt && pack > 1 && (!shape_of.is_tile() || shape_of.shape.back() < pack))
    return (void)c.fail("expects tile operands whose last dimension holds pack = ", pack,
                        " elements, got ", shape_of.str());
  const AsmConstraints parsed = parse_asm_constraints(*constraints);
  if (!parsed.error.empty())
    return (void)c.fail("has a malformed constraint string \"", *constraints, "\": ", parsed.error);
  const int want_out = inline_asm_registers(outs, pack), want_in = inline_asm_registers(ins, pack);
  if (parsed.outputs != want_out || parsed.inputs != want_in)
    c.fail("expects ", want_out, " output and ", want_in, " input constraints (pack = ", pack,
           "), got ", parsed.outputs, " and ", parsed.inputs, " in \"", *constraints, "\"");
}

}  // namespace tessera::ir::verifier_detail
