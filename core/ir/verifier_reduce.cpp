/// \file Verifier typing rules: reductions, scans (with kinds or combine regions) and `dot`.
#include <algorithm>

#include "core/ir/ops.h"
#include "core/ir/verifier_checks.h"

namespace tessera::ir::verifier_detail {
namespace {

constexpr std::string_view kReduceKinds = "sum, prod, max, min, argmax, argmin, xor_sum, and, or";

Shape drop_axis(Shape shape, int axis) {
  shape.erase(shape.begin() + axis);
  return shape;
}

/// A non-pointer tile operand #0 and a valid `axis`.
std::optional<int> tile_and_axis(OpChecker& c) {
  const Type& a = c.in(0);
  if (!a.is_tile() || a.is_ptr) {
    c.fail("expects a tile of integers or floats, got ", a.str());
    return std::nullopt;
  }
  return c.axis_attr(a.rank());
}

bool is_bitwise(ReduceKind k) {
  return k == ReduceKind::XorSum || k == ReduceKind::And || k == ReduceKind::Or;
}

void check_reduce(OpChecker& c) {
  std::optional<ReduceKind> kind = c.enum_attr(attr::kKind, parse_reduce_kind, kReduceKinds, true);
  std::optional<int> axis = tile_and_axis(c);
  if (!kind || !axis) return;
  const Type& a = c.in(0);
  if (is_bitwise(*kind) && !a.is_int()) {
    c.fail("expects an integer operand for kind \"", to_string(*kind), "\", got ", a.str());
    return;
  }
  check_nan_attr(c);
  bool arg = *kind == ReduceKind::ArgMax || *kind == ReduceKind::ArgMin;
  Type want{arg ? DType::i32 : a.dtype, false, drop_axis(a.shape, *axis)};
  c.expect_type("result", c.out(), want);
}

void check_scan(OpChecker& c) {
  std::optional<ReduceKind> kind =
      c.enum_attr(attr::kKind, parse_reduce_kind, "sum, prod, max, min", true);
  if (kind && *kind != ReduceKind::Sum && *kind != ReduceKind::Prod && *kind != ReduceKind::Max &&
      *kind != ReduceKind::Min)
    c.fail("expects attribute 'kind' to be one of sum, prod, max, min; got \"", to_string(*kind),
           "\"");
  c.flag_attr(attr::kReverse);
  check_nan_attr(c);
  if (!tile_and_axis(c)) return;
  c.expect_type("result", c.out(), c.in(0), " (the operand's)");
}

/// reduce_generic and scan_generic: N tiles of one shape combined by a region taking 2N scalars.
void check_generic(OpChecker& c, bool is_scan) {
  size_t n = c.num_in();
  const Type& a = c.in(0);
  if (!a.is_tile()) {
    c.fail("expects tile operands, got ", a.str());
    return;
  }
  for (size_t i = 1; i < n; ++i) {
    if (c.in(i).is_tile() && c.in(i).shape == a.shape) continue;
    c.fail("expects operands of one shape ", shape_str(a.shape), ", got ", c.in(i).str());
    return;
  }
  if (is_scan) c.flag_attr(attr::kReverse);
  std::optional<int> axis = c.axis_attr(a.rank());
  check_terminators(c);
  std::vector<Type> elements;
  for (size_t i = 0; i < n; ++i) elements.push_back(c.in(i).element());
  std::vector<Type> args = elements;
  args.insert(args.end(), elements.begin(), elements.end());
  c.expect_types("combine region arguments (left then right elements)",
                 types_of(c.op.region(0)->args), args);
  if (!axis || !c.expect_num_results(n, "one per operand")) return;
  std::vector<Type> want;
  for (size_t i = 0; i < n; ++i)
    want.push_back(is_scan ? c.in(i) : c.in(i).with_shape(drop_axis(c.in(i).shape, *axis)));
  c.expect_types("result types", types_of(c.op.results), want);
}

/// The accumulator dtypes `dot` accepts for an input dtype; empty if the input is unsupported.
std::vector<DType> dot_acc_dtypes(DType in) {
  switch (in) {
    case DType::f16:
      return {DType::f32, DType::f16};
    case DType::bf16:
    case DType::f32:
      return {DType::f32};
    case DType::f64:
      return {DType::f64};
    case DType::i8:
      return {DType::i32};
    case DType::f8e4m3:  // wgmma's fp8 kinds accumulate in f32 (or f16; Tessera plans f32)
    case DType::f8e5m2:
      return {DType::f32};
    default:
      return {};
  }
}

bool check_dot_shapes(OpChecker& c) {
  for (size_t i = 0; i < 3; ++i) {
    if (c.in(i).rank() == 2 && !c.in(i).is_ptr) continue;
    return c.fail("expects operand #", i, " to be a 2-D tile, got ", c.in(i).str());
  }
  const Shape& a = c.in(0).shape;
  const Shape& b = c.in(1).shape;
  const Shape& acc = c.in(2).shape;
  int64_t m = a[0], k = a[1], n = b[1];
  if (b[0] != k)
    return c.fail("expects operand #1 of shape [K, N] = ", shape_str({k, n}), ", got ",
                  shape_str(b));
  if (acc != Shape{m, n})
    return c.fail("expects operand #2 of shape [M, N] = ", shape_str({m, n}), ", got ",
                  shape_str(acc));
  return true;
}

void check_dot(OpChecker& c) {
  c.enum_attr(attr::kPrecision, parse_dot_precision, "ieee, tf32", false);
  if (!check_dot_shapes(c)) return;
  DType in = c.in(0).dtype;
  DType acc = c.in(2).dtype;
  if (c.in(1).dtype != in) {
    c.fail("expects operands #0 and #1 of one dtype, got ", dtype_name(in), " and ",
           dtype_name(c.in(1).dtype));
    return;
  }
  std::vector<DType> accs = dot_acc_dtypes(in);
  if (accs.empty()) {
    c.fail("expects inputs of dtype f16, bf16, f32, f64, i8, f8e4m3 or f8e5m2, got ",
           dtype_name(in));
    return;
  }
  if (std::find(accs.begin(), accs.end(), acc) == accs.end()) {
    std::string want(dtype_name(accs[0]));
    if (accs.size() > 1) want += " or " + std::string(dtype_name(accs[1]));
    c.fail("expects an accumulator of dtype ", want, " for ", dtype_name(in), " inputs, got ",
           dtype_name(acc));
    return;
  }
  c.expect_type("result", c.out(), c.in(2), " (the accumulator's)");
}

}  // namespace

void check_reduction(OpChecker& c) {
  // clang-format off
  switch (c.op.kind) {
    case OpKind::Reduce: return check_reduce(c);
    case OpKind::Scan: return check_scan(c);
    case OpKind::ReduceGeneric: return check_generic(c, /*is_scan=*/false);
    case OpKind::ScanGeneric: return check_generic(c, /*is_scan=*/true);
    case OpKind::Dot: return check_dot(c);
    default:
      TESSERA_CHECK(false, "not a reduction op: ", c.op.name());
  }
  // clang-format on
}

}  // namespace tessera::ir::verifier_detail
