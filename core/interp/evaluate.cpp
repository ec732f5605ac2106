/// \file Constant folding through the interpreter: the elementwise families' value functions on
/// scalars, with the cases ops.h leaves undefined refused.
#include "core/interp/evaluate.h"

#include <cmath>
#include <vector>

#include "core/interp/exec.h"
#include "core/ir/op_table.h"

namespace tessera::interp {
namespace {

using ir::DType;
using ir::OpKind;

using ValueFn = RuntimeValue (*)(const ir::Op&, std::span<const RuntimeValue* const>,
                                 const ir::Shape&);

/// The value function of each elementwise kind: the same families as the interpreter's dispatch
/// table (interpreter.cpp), whose exec_arith, exec_unary and exec_cast call these functions.
constexpr ir::OpTable<ValueFn> kValueFns = [] {
  using K = ir::OpKind;
  ir::OpTable<ValueFn> t;
  t.add_trait(unary_value, ir::kMath);
  // clang-format off
  t.add(arith_value, {K::Add, K::Sub, K::Mul, K::Div, K::Rem, K::Min, K::Max, K::And, K::Or,
                      K::Xor, K::Shl, K::Shr, K::CmpEq, K::CmpNe, K::CmpLt, K::CmpLe, K::CmpGt,
                      K::CmpGe});
  t.add(unary_value, {K::Neg, K::Not, K::Abs, K::Fma, K::Where});
  t.add(cast_value, {K::Cast, K::Bitcast});
  // clang-format on
  return t;
}();

/// Exactly the `kElementwise` rows but ptr_add: a new elementwise row gets folding (or is named
/// here as not folded) before it builds.
constexpr bool covers_elementwise() {
  for (const ir::OpRow& r : ir::kOpRows) {
    const bool elementwise = (r.traits & ir::kElementwise) != 0 && r.kind != OpKind::PtrAdd;
    if (elementwise != kValueFns.has(r.kind)) return false;
  }
  return true;
}
static_assert(covers_elementwise(), "an elementwise op kind of ops.def has no folding family");

/// Signed for the undefined cases: i1 is an unsigned 1-bit integer (0 < 1) in the interpreter.
bool is_signed(DType t) {
  return ir::is_signed_int(t) && t != DType::i1;
}

/// The element's bits zero-extended from the dtype's width.
uint64_t unsigned_bits(const RuntimeValue& v) {
  const int width = ir::dtype_bits(v.dtype);
  const uint64_t bits = static_cast<uint64_t>(int_element(v));
  return width >= 64 ? bits : bits & ((uint64_t{1} << width) - 1);
}

bool undefined_division(const RuntimeValue& a, const RuntimeValue& b) {
  if (ir::is_float(a.dtype)) return false;
  if (int_element(b) == 0) return true;
  if (!is_signed(a.dtype) || int_element(b) != -1) return false;
  const int64_t min = static_cast<int64_t>(~uint64_t{0} << (ir::dtype_bits(a.dtype) - 1));
  return int_element(a) == min;
}

bool undefined_cast(const RuntimeValue& a, DType to) {
  if (!ir::is_float(a.dtype) || ir::is_float(to) || to == DType::i1) return false;
  const double t = std::trunc(float_element(a));
  const int width = ir::dtype_bits(to);
  const double lo = is_signed(to) ? -std::ldexp(1.0, width - 1) : 0.0;
  const double hi = std::ldexp(1.0, is_signed(to) ? width - 1 : width);  // exclusive
  return !(t >= lo && t < hi);                                           // NaN included
}

}  // namespace

bool evaluates(ir::OpKind kind) {
  return kValueFns.has(kind);
}

bool is_undefined(const ir::Op& op, std::span<const RuntimeValue> operands) {
  switch (op.kind) {
    case OpKind::Div:
    case OpKind::Rem:
      return undefined_division(operands[0], operands[1]);
    case OpKind::Shl:
    case OpKind::Shr:
      return !ir::is_float(operands[1].dtype) &&
             unsigned_bits(operands[1]) >= static_cast<uint64_t>(ir::dtype_bits(operands[1].dtype));
    case OpKind::Cast:
      return undefined_cast(operands[0], op.result()->type.dtype);
    default:
      return false;
  }
}

std::optional<RuntimeValue> evaluate_elementwise(const ir::Op& op,
                                                 std::span<const RuntimeValue> operands) {
  if (!evaluates(op.kind) || operands.size() != op.operands.size()) return std::nullopt;
  if (is_undefined(op, operands)) return std::nullopt;
  std::vector<const RuntimeValue*> pointers;
  for (const RuntimeValue& v : operands) pointers.push_back(&v);
  return kValueFns[op.kind](op, pointers, {});
}

}  // namespace tessera::interp
