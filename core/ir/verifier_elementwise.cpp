/// \file Verifier typing rules: elementwise ops (arithmetic, bitwise, compares, math, where,
/// casts, pointer add) and memory ops (load, store, atomics).
#include "core/ir/ops.h"
#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {
namespace {

/// "a float operand" or "float operands".
std::string operands_of(const OpChecker& c, std::string_view cls) {
  if (c.num_in() > 1) return std::string(cls) + " operands";
  bool vowel = std::string_view("aeiou").find(cls[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + std::string(cls) + " operand";
}

/// Operands of one type satisfying `ok`, and a result of that type.
void check_same_type_op(OpChecker& c, bool ok, std::string_view cls) {
  if (!c.expect_same_operand_types()) return;
  if (!ok) {
    c.fail("expects ", operands_of(c, cls), ", got ", c.in(0).str());
    return;
  }
  c.expect_type("result", c.out(), c.in(0), " (the operands')");
}

void check_compare(OpChecker& c) {
  if (!c.expect_same_operand_types()) return;
  const Type& a = c.in(0);
  c.expect_type("result", c.out(), Type{DType::i1, false, a.shape});
}

void check_min_max(OpChecker& c) {
  check_same_type_op(c, !c.in(0).is_ptr, "integer or float");
  check_nan_attr(c);
}

void check_where(OpChecker& c) {
  const Type& a = c.in(1);
  if (c.in(2) != a) {
    c.fail("expects operands #1 and #2 of identical types, got ", a.str(), " and ", c.in(2).str());
    return;
  }
  c.expect_type("operand #0 (the condition)", c.in(0), Type{DType::i1, false, a.shape});
  c.expect_type("result", c.out(), a, " (the operands')");
}

void check_cast(OpChecker& c) {
  const Type& a = c.in(0);
  const Type& r = c.out();
  if (a.is_ptr || r.is_ptr) {
    c.fail("expects a non-pointer operand and result, got ", a.str(), " to ", r.str());
    return;
  }
  if (a.shape != r.shape)
    c.fail("expects a result of the operand's shape ", shape_str(a.shape), ", got ", r.str());
}

int element_bits(const Type& t) {
  return t.is_ptr ? 64 : dtype_bits(t.dtype);
}

void check_bitcast(OpChecker& c) {
  const Type& a = c.in(0);
  const Type& r = c.out();
  if (a.shape != r.shape) {
    c.fail("expects a result of the operand's shape ", shape_str(a.shape), ", got ", r.str());
    return;
  }
  // A pointer reinterprets as a 64-bit integer and back (its byte address), nothing narrower.
  const Type& other = a.is_ptr ? r : a;
  if (a.is_ptr != r.is_ptr && other.dtype != DType::i64 && other.dtype != DType::u64) {
    c.fail("expects both or neither of operand and result to be pointers, or a pointer and a ",
           "64-bit integer, got ", a.str(), " to ", r.str());
    return;
  }
  if (element_bits(a) != element_bits(r))
    c.fail("expects element types of one bit width, got ", a.element().str(), " (", element_bits(a),
           " bits) to ", r.element().str(), " (", element_bits(r), " bits)");
}

void check_ptr_add(OpChecker& c) {
  if (!c.expect_pointer(0)) return;
  const Type& p = c.in(0);
  const Type& off = c.in(1);
  if (!off.is_int() || off.shape != p.shape) {
    c.fail("expects operand #1 to be an integer of shape ", shape_str(p.shape), ", got ",
           off.str());
    return;
  }
  c.expect_type("result", c.out(), p, " (the pointer's)");
}

}  // namespace

void check_nan_attr(OpChecker& c) {
  const std::string* nan = c.str_attr(attr::kNan, false);
  if (nan && *nan != "propagate" && *nan != "ignore")
    c.fail("expects attribute 'nan' to be one of propagate, ignore; got \"", *nan, "\"");
}

void check_elementwise(OpChecker& c) {
  const Type& a = c.in(0);
  // Every math function of ops.def, whatever its arity: float operands of one type.
  if (has_trait(c.op.kind, kMath)) return check_same_type_op(c, a.is_float(), "float");
  // clang-format off
  switch (c.op.kind) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Rem:
    case OpKind::Neg: case OpKind::Abs:
      return check_same_type_op(c, !a.is_ptr, "integer or float");
    case OpKind::Min: case OpKind::Max:
      return check_min_max(c);
    case OpKind::And: case OpKind::Or: case OpKind::Xor: case OpKind::Shl: case OpKind::Shr:
    case OpKind::Not:
      return check_same_type_op(c, a.is_int(), "integer");
    case OpKind::CmpEq: case OpKind::CmpNe: case OpKind::CmpLt: case OpKind::CmpLe:
    case OpKind::CmpGt: case OpKind::CmpGe:
      return check_compare(c);
    case OpKind::Fma:
      return check_same_type_op(c, a.is_float(), "float");
    case OpKind::Where: return check_where(c);
    case OpKind::Cast: return check_cast(c);
    case OpKind::Bitcast: return check_bitcast(c);
    case OpKind::PtrAdd: return check_ptr_add(c);
    default:
      TESSERA_CHECK(false, "not an elementwise op: ", c.op.name());
  }
  // clang-format on
}

namespace {

/// What one element of operand #0 (a pointer) points to, in the pointer's shape.
Type pointee(const Type& ptr) {
  return Type{ptr.dtype, false, ptr.shape};
}

void check_mask(OpChecker& c, size_t i) {
  if (i < c.num_in())
    c.expect_type("operand #" + std::to_string(i) + " (the mask)", c.in(i),
                  Type{DType::i1, false, c.in(0).shape});
}

void check_sem_scope(OpChecker& c) {
  c.enum_attr(attr::kSem, parse_mem_sem, "relaxed, acquire, release, acq_rel", false);
  c.enum_attr(attr::kScope, parse_mem_scope, "cta, gpu, sys", false);
}

void check_load(OpChecker& c) {
  if (!c.expect_pointer(0)) return;
  Type want = pointee(c.in(0));
  c.expect_type("result", c.out(), want, " (the pointee type in the pointer's shape)");
  check_mask(c, 1);
  if (c.num_in() > 2) c.expect_type("operand #2 (other)", c.in(2), want);
  c.str_attr(attr::kCache, false);
  c.str_attr(attr::kEviction, false);
}

void check_store(OpChecker& c) {
  if (!c.expect_pointer(0)) return;
  c.expect_type("operand #1 (the value)", c.in(1), pointee(c.in(0)),
                " (the pointee type in the pointer's shape)");
  check_mask(c, 2);
  c.str_attr(attr::kCache, false);
  c.str_attr(attr::kEviction, false);
}

/// desc_load and desc_store: a scalar base pointer, then rank (the block's) scalars each of
/// dims, strides and offsets, of one index dtype (i32 or i64); the block has the pointee dtype.
void check_desc(OpChecker& c) {
  const bool is_store = c.op.kind == OpKind::DescStore;
  const size_t indices = c.num_in() - (is_store ? 2 : 1);
  const Type& block = is_store ? c.in(c.num_in() - 1) : c.out();
  if (indices % 3 != 0 || indices == 0)
    return void(
        c.fail("expects a base pointer, then the same number (the rank) of dims, strides "
               "and offsets",
               is_store ? ", then the value" : "", "; got ", c.num_in(), " operands"));
  const size_t rank = indices / 3;
  if (!c.in(0).is_ptr || !c.in(0).shape.empty())
    return void(
        c.fail("expects operand #0 (the base) to be a scalar pointer, got ", c.in(0).str()));
  const Type index = c.in(1);
  if (index.is_ptr || !index.shape.empty() ||
      (index.dtype != DType::i32 && index.dtype != DType::i64))
    return void(c.fail("expects the dims, strides and offsets to be i32 or i64 scalars, got ",
                       index.str()));
  for (size_t i = 2; i <= indices; ++i)
    if (!c.expect_type("operand #" + std::to_string(i) + " (a dim, stride or offset)", c.in(i),
                       index, " (the type of operand #1)"))
      return;
  if (block.shape.size() != rank || !block.is_tile())
    return void(c.fail("expects the block (", is_store ? "the value" : "the result",
                       ") to be a tile of rank ", rank, ", got ", block.str()));
  c.expect_type(is_store ? "the value" : "result", block, Type{c.in(0).dtype, false, block.shape},
                " (the pointee type in the block's shape)");
}

void check_atomic_rmw(OpChecker& c) {
  std::optional<AtomicOp> op =
      c.enum_attr(attr::kOp, parse_atomic_op, "add, max, min, and, or, xor, xchg", true);
  check_sem_scope(c);
  if (!c.expect_pointer(0)) return;
  Type want = pointee(c.in(0));
  c.expect_type("operand #1 (the value)", c.in(1), want,
                " (the pointee type in the pointer's shape)");
  check_mask(c, 2);
  c.expect_type("result", c.out(), want, " (the pointee type in the pointer's shape)");
  bool float_ok =
      op == AtomicOp::Add || op == AtomicOp::Max || op == AtomicOp::Min || op == AtomicOp::Xchg;
  if (op && want.is_float() && !float_ok)
    c.fail("expects an integer pointee for op \"", to_string(*op), "\", got ", c.in(0).str());
}

void check_atomic_cas(OpChecker& c) {
  check_sem_scope(c);
  if (!c.expect_pointer(0)) return;
  Type want = pointee(c.in(0));
  const char* note = " (the pointee type in the pointer's shape)";
  c.expect_type("operand #1 (the compared value)", c.in(1), want, note);
  c.expect_type("operand #2 (the new value)", c.in(2), want, note);
  c.expect_type("result", c.out(), want, note);
}

}  // namespace

void check_memory(OpChecker& c) {
  // clang-format off
  switch (c.op.kind) {
    case OpKind::Load: return check_load(c);
    case OpKind::Store: return check_store(c);
    case OpKind::AtomicRmw: return check_atomic_rmw(c);
    case OpKind::AtomicCas: return check_atomic_cas(c);
    case OpKind::DescLoad: case OpKind::DescStore: return check_desc(c);
    default:
      TESSERA_CHECK(false, "not a memory op: ", c.op.name());
  }
  // clang-format on
}

}  // namespace tessera::ir::verifier_detail
