/// \file tl::inline_asm_elementwise (Triton's tl.inline_asm_elementwise): the checks a kernel
/// author needs named at the call (constraint count, dtypes, pack), then one inline_asm op.
#include <bit>
#include <string>

#include "core/ir/ops.h"
#include "core/lang/semantic.h"
#include "core/lang/tl.h"

namespace tessera::tl {

namespace {

constexpr std::string_view kOp = "inline_asm_elementwise";

/// "i32, f16" for the message of a constraint-count mismatch.
std::string dtype_list(const std::vector<DType>& ts) {
  std::string s;
  for (DType t : ts) s += (s.empty() ? "" : ", ") + std::string(ir::dtype_name(t));
  return s;
}

void check_dtype(DType t, const std::string& what, const Here& loc) {
  if (t == DType::i1)
    user_error(loc, kOp, what + " is i1, which inline asm does not take (use an integer dtype)");
}

}  // namespace

std::vector<tensor> inline_asm_elementwise(const std::string& asm_text,
                                           const std::string& constraints,
                                           const std::vector<Operand>& args,
                                           const std::vector<DType>& dtypes, bool is_pure, int pack,
                                           Here loc) {
  if (args.empty()) user_error(loc, kOp, "needs at least one argument (the result's shape)");
  if (dtypes.empty()) user_error(loc, kOp, "needs at least one result dtype");
  if (pack < 1 || pack > 16 || !std::has_single_bit(static_cast<unsigned>(pack)))
    user_error(loc, kOp, "pack must be a power of two from 1 to 16, got " + std::to_string(pack));
  std::vector<ir::Value*> values;
  std::vector<DType> in_types;
  for (size_t i = 0; i < args.size(); ++i) {
    ir::Value* v = detail::value_of(args[i], kOp, loc);
    const std::string what = "argument " + std::to_string(i) + " (" + v->type.str() + ")";
    if (v->type.is_ptr)
      user_error(loc, kOp, what + " is a pointer, which inline asm does not take");
    check_dtype(v->type.dtype, what, loc);
    values.push_back(v);
    in_types.push_back(v->type.dtype);
  }
  for (size_t i = 0; i < dtypes.size(); ++i)
    check_dtype(dtypes[i], "result dtype " + std::to_string(i), loc);
  detail::broadcast_all(values, kOp, loc);
  const ir::Type& shaped = values[0]->type;
  if (pack > 1 && (!shaped.is_tile() || shaped.shape.back() < pack))
    user_error(loc, kOp,
               "pack = " + std::to_string(pack) + " takes " + std::to_string(pack) +
                   " consecutive elements of the last dimension per call; the arguments are " +
                   shaped.str());
  const ir::AsmConstraints parsed = ir::parse_asm_constraints(constraints);
  if (!parsed.error.empty())
    user_error(loc, kOp, "constraint string \"" + constraints + "\": " + parsed.error);
  const int want_out = ir::inline_asm_registers(dtypes, pack);
  const int want_in = ir::inline_asm_registers(in_types, pack);
  if (parsed.outputs != want_out || parsed.inputs != want_in)
    user_error(loc, kOp,
               "constraint string \"" + constraints + "\" has " + std::to_string(parsed.outputs) +
                   " outputs and " + std::to_string(parsed.inputs) + " inputs; results (" +
                   dtype_list(dtypes) + ") and arguments (" + dtype_list(in_types) +
                   ") at pack = " + std::to_string(pack) + " take " + std::to_string(want_out) +
                   " and " + std::to_string(want_in) +
                   " registers (a type below 32 bits packs 32 / bits elements per register)");
  std::vector<ir::Type> types;
  for (DType t : dtypes) types.push_back(shaped.with_dtype(t));
  std::vector<ir::Attribute> attrs = {{attr::kAsm, asm_text}, {attr::kConstraints, constraints}};
  if (pack > 1) attrs.push_back({attr::kPack, int64_t{pack}});
  ir::Op* op = detail::builder_at(loc).create(
      is_pure ? ir::OpKind::InlineAsm : ir::OpKind::InlineAsmImpure, values, types, attrs);
  std::vector<tensor> out;
  for (ir::Value* r : op->results) out.push_back(detail::wrap(r));
  return out;
}

tensor inline_asm_elementwise(const std::string& asm_text, const std::string& constraints,
                              const std::vector<Operand>& args, DType dtype, bool is_pure, int pack,
                              Here loc) {
  return inline_asm_elementwise(asm_text, constraints, args, std::vector<DType>{dtype}, is_pure,
                                pack, loc)[0];
}

}  // namespace tessera::tl
