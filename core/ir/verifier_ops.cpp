/// \file Verifier typing rules: program identity, constants and tile construction, hints and
/// debugging ops.
#include <algorithm>
#include <limits>
#include <numeric>

#include "core/ir/printer.h"
#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {
namespace {

const Type kI32 = Type::scalar(DType::i32);

bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

void check_program_id(OpChecker& c) {
  c.int_attr_in(attr::kAxis, 0, 2);
  c.expect_type("result", c.out(), kI32);
}

/// The canonical range of an integer constant: signed dtypes sign-extended, unsigned ones
/// zero-extended, i1 is 0 or 1 (u64 and i64 take any int64).
bool int_fits(int64_t v, DType t, int64_t* lo, int64_t* hi) {
  int bits = dtype_bits(t);
  if (bits >= 64) return true;
  if (t == DType::i1 || is_unsigned_int(t)) {
    *lo = 0;
    *hi = (int64_t{1} << bits) - 1;
  } else {
    *lo = -(int64_t{1} << (bits - 1));
    *hi = (int64_t{1} << (bits - 1)) - 1;
  }
  return v >= *lo && v <= *hi;
}

void check_constant(OpChecker& c) {
  const Type& t = c.out();
  if (t.is_ptr) {
    c.fail("expects a result of integer or float type, got ", t.str());
    return;
  }
  const AttrValue* v = c.op.find_attr(attr::kValue);
  if (!v) {
    c.fail("expects an attribute 'value'");
    return;
  }
  const int64_t* i = std::get_if<int64_t>(v);
  if (t.is_float()) {
    if (!i && !std::holds_alternative<double>(*v))
      c.fail("expects a numeric 'value' for result type ", t.str(), ", got ", print_attr_value(*v));
    return;
  }
  if (!i) {
    c.fail("expects an integer 'value' for result type ", t.str(), ", got ", print_attr_value(*v));
    return;
  }
  int64_t lo = 0, hi = 0;
  if (!int_fits(*i, t.dtype, &lo, &hi))
    c.fail("expects 'value' in the range of ", dtype_name(t.dtype), " [", lo, ", ", hi, "], got ",
           *i);
}

void check_arange(OpChecker& c) {
  std::optional<int64_t> start = c.int_attr(attr::kStart), end = c.int_attr(attr::kEnd);
  if (!start || !end) return;
  if (*start < std::numeric_limits<int32_t>::min() ||
      *end - 1 > std::numeric_limits<int32_t>::max()) {
    c.fail("expects start and end - 1 in the range of i32, got ", *start, " and ", *end);
    return;
  }
  int64_t n = *end - *start;
  if (!is_power_of_two(n)) {
    c.fail("expects end - start to be a positive power of two, got ", n);
    return;
  }
  c.expect_type("result", c.out(), Type::tile(DType::i32, {n}));
}

void check_splat(OpChecker& c) {
  if (c.in(0).is_tile()) {
    c.fail("expects a scalar operand, got ", c.in(0).str());
    return;
  }
  if (!c.out().is_tile() || c.out().element() != c.in(0))
    c.fail("expects a tile result of element type ", c.in(0).str(), ", got ", c.out().str());
}

/// The operand and the result are tiles of one element type.
bool same_element_tiles(OpChecker& c) {
  const Type& a = c.in(0);
  if (!a.is_tile()) return c.fail("expects a tile operand, got ", a.str());
  if (!c.out().is_tile() || c.out().element() != a.element())
    return c.fail("expects a tile result of element type ", a.element().str(), ", got ",
                  c.out().str());
  return true;
}

void check_broadcast(OpChecker& c) {
  if (!same_element_tiles(c)) return;
  const Shape& from = c.in(0).shape;
  const Shape& to = c.out().shape;
  bool ok = from.size() == to.size();
  for (size_t i = 0; ok && i < from.size(); ++i) ok = from[i] == to[i] || from[i] == 1;
  if (!ok)
    c.fail("expects the operand shape ", shape_str(from), " to broadcast to the result shape ",
           shape_str(to), " (same rank; each dimension equal or 1)");
}

void check_expand_dims(OpChecker& c) {
  const Type& a = c.in(0);
  std::optional<int64_t> axis = c.int_attr_in(attr::kAxis, 0, a.rank());
  if (!axis) return;
  Shape shape = a.shape;
  shape.insert(shape.begin() + *axis, 1);
  c.expect_type("result", c.out(), a.with_shape(shape));
}

void check_reshape(OpChecker& c) {
  const Type& a = c.in(0);
  const Type& r = c.out();
  if (r.element() != a.element()) {
    c.fail("expects a result of element type ", a.element().str(), ", got ", r.str());
    return;
  }
  if (r.numel() != a.numel())
    c.fail("expects a result of ", a.numel(), " elements (the operand's ", shape_str(a.shape),
           "), got ", shape_str(r.shape));
}

void check_permute(OpChecker& c) {
  const Type& a = c.in(0);
  if (!a.is_tile()) {
    c.fail("expects a tile operand, got ", a.str());
    return;
  }
  const std::vector<int64_t>* order = c.ints_attr(attr::kOrder);
  if (!order) return;
  std::vector<int64_t> sorted = *order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(a.shape.size());
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota) {
    c.fail("expects attribute 'order' to be a permutation of 0..", a.rank() - 1, ", got ",
           print_attr_value(*order));
    return;
  }
  Shape shape;
  for (int64_t k : *order) shape.push_back(a.shape[static_cast<size_t>(k)]);
  c.expect_type("result", c.out(), a.with_shape(shape));
}

void check_cat(OpChecker& c) {
  const Type& a = c.in(0);
  const Type& b = c.in(1);
  if (!a.is_tile() || !b.is_tile()) {
    c.fail("expects tile operands, got ", a.str(), " and ", b.str());
    return;
  }
  if (a.element() != b.element() || a.rank() != b.rank()) {
    c.fail("expects operands of one element type and rank, got ", a.str(), " and ", b.str());
    return;
  }
  std::optional<int> axis = c.axis_attr(a.rank());
  if (!axis) return;
  Shape shape = a.shape;
  Shape other = b.shape;
  shape[*axis] = other[*axis] = 0;
  if (shape != other) {
    c.fail("expects operand shapes ", shape_str(a.shape), " and ", shape_str(b.shape),
           " to agree except in dimension ", *axis);
    return;
  }
  shape[*axis] = a.shape[*axis] + b.shape[*axis];
  c.expect_type("result", c.out(), a.with_shape(shape));
}

void check_print(OpChecker& c) {
  c.str_attr(attr::kPrefix, false);
  c.flag_attr(attr::kHex);
}

void check_assert(OpChecker& c) {
  c.str_attr(attr::kMessage, false);
  c.str_attr(attr::kFault, false);
  const int64_t values = assert_values(c);
  if (c.num_in() != static_cast<size_t>(values) + 1) {
    c.fail("expects ", values + 1, " operands (", values, " values, then the condition), got ",
           c.num_in());
    return;
  }
  const Type& cond = c.in(c.num_in() - 1);
  if (!cond.is_bool()) c.fail("expects a condition of dtype i1, got ", cond.str());
  for (size_t i = 0; i + 1 < c.num_in(); ++i)
    if (!c.in(i).is_int() || c.in(i).is_bool() || c.in(i).shape != cond.shape)
      c.fail("expects value #", i, " to be integers of the condition's shape, got ", c.in(i).str());
}

void check_hint(OpChecker& c) {
  const Type& a = c.in(0);
  if (!a.is_int() && !a.is_ptr) {
    c.fail("expects an integer or pointer operand, got ", a.str());
    return;
  }
  c.expect_type("result", c.out(), a, " (the operand's)");
  const std::vector<int64_t>* values = c.ints_attr(attr::kValues);
  if (!values) return;
  size_t want = std::max<size_t>(a.shape.size(), 1);
  if (values->size() != want) {
    c.fail("expects attribute 'values' with ", want, " entries (one per dimension), got ",
           print_attr_value(*values));
    return;
  }
  if (std::any_of(values->begin(), values->end(), [](int64_t v) { return v <= 0; }))
    c.fail("expects positive entries in attribute 'values', got ", print_attr_value(*values));
}

void check_assume(OpChecker& c) {
  c.expect_type("operand", c.in(0), Type::scalar(DType::i1));
}

}  // namespace

void check_identity_or_construction(OpChecker& c) {
  // clang-format off
  switch (c.op.kind) {
    case OpKind::ProgramId: case OpKind::NumPrograms:
      return check_program_id(c);
    case OpKind::Constant: return check_constant(c);
    case OpKind::Arange: return check_arange(c);
    case OpKind::Splat: return check_splat(c);
    case OpKind::Broadcast: return check_broadcast(c);
    case OpKind::ExpandDims: return check_expand_dims(c);
    case OpKind::Reshape: return check_reshape(c);
    case OpKind::Permute: return check_permute(c);
    case OpKind::Cat: return check_cat(c);
    default:
      TESSERA_CHECK(false, "not a construction op: ", c.op.name());
  }
  // clang-format on
}

void check_hint_or_debug(OpChecker& c) {
  // clang-format off
  switch (c.op.kind) {
    case OpKind::Print: return check_print(c);
    case OpKind::Assert: return check_assert(c);
    case OpKind::MultipleOf: case OpKind::MaxContiguous:
      return check_hint(c);
    case OpKind::Assume: return check_assume(c);
    default:
      TESSERA_CHECK(false, "not a hint or debug op: ", c.op.name());
  }
  // clang-format on
}

}  // namespace tessera::ir::verifier_detail
