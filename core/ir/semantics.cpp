/// \file The math ops' definitions (semantics.h), in double precision.
#include "core/ir/semantics.h"

#include <cmath>

#include "core/support/error.h"
#include "op_table.h"

namespace tessera::ir {

namespace {

/// erfinv in double, as near to correctly rounded as double's erf and erfc allow: a guess, then
/// Newton steps on log(erfc(t)) = log(1 - a) where erf(t) is near 1 (well conditioned there),
/// and Halley steps on erf(t) = a (through erfc(t) = 1 - a above a = 1/2, where 1 - a is exact).
double erfinv(double y) {
  const double a = std::fabs(y);
  if (std::isnan(y) || a > 1) return std::nan("");
  if (a == 1) return std::copysign(INFINITY, y);
  if (a == 0) return y;
  const double q = 1 - a, k = 1.1283791670955126;  // 2 / sqrt(pi)
  double t = a < 0.5 ? a * 0.886226925452758 : std::sqrt(-std::log(q * (1 + a)));
  if (a >= 0.5)
    for (int i = 0; i < 8; ++i) {
      const double c = std::erfc(t);
      t += (std::log(c) - std::log(q)) * c / (k * std::exp(-t * t));
    }
  for (int i = 0; i < 3; ++i) {
    const double f = a < 0.5 ? std::erf(t) - a : q - std::erfc(t);
    const double d = f / (k * std::exp(-t * t));
    t -= d / (1 + t * d);
  }
  return std::copysign(t, y);
}

/// The definition of each math op kind, by arity. The static_asserts fail the build while a
/// `kMath` row of ops.def has no definition (or one of the wrong arity).
constexpr OpTable<MathFn> kMathFns = [] {
  OpTable<MathFn> t;
  t.add([](double x) { return std::exp(x); }, {OpKind::Exp});
  t.add([](double x) { return std::exp2(x); }, {OpKind::Exp2});
  t.add([](double x) { return std::log(x); }, {OpKind::Log});
  t.add([](double x) { return std::log2(x); }, {OpKind::Log2});
  t.add([](double x) { return std::sqrt(x); }, {OpKind::Sqrt});
  t.add([](double x) { return 1.0 / std::sqrt(x); }, {OpKind::Rsqrt});
  t.add([](double x) { return std::sin(x); }, {OpKind::Sin});
  t.add([](double x) { return std::cos(x); }, {OpKind::Cos});
  t.add([](double x) { return std::tanh(x); }, {OpKind::Tanh});
  t.add([](double x) { return std::erf(x); }, {OpKind::Erf});
  t.add([](double x) { return std::log1p(x); }, {OpKind::Log1p});
  t.add([](double x) { return std::expm1(x); }, {OpKind::Expm1});
  t.add([](double x) { return std::log10(x); }, {OpKind::Log10});
  t.add([](double x) { return std::sinh(x); }, {OpKind::Sinh});
  t.add([](double x) { return std::cosh(x); }, {OpKind::Cosh});
  t.add([](double x) { return std::asin(x); }, {OpKind::Asin});
  t.add([](double x) { return std::acos(x); }, {OpKind::Acos});
  t.add([](double x) { return std::atan(x); }, {OpKind::Atan});
  t.add([](double x) { return std::cbrt(x); }, {OpKind::Cbrt});
  t.add(erfinv, {OpKind::Erfinv});
  t.add([](double x) { return std::floor(x); }, {OpKind::Floor});
  t.add([](double x) { return std::ceil(x); }, {OpKind::Ceil});
  return t;
}();
constexpr OpTable<MathFn2> kMathFns2 = [] {
  OpTable<MathFn2> t;
  t.add([](double x, double y) { return std::pow(x, y); }, {OpKind::Pow});
  t.add([](double x, double y) { return std::atan2(x, y); }, {OpKind::Atan2});
  t.add([](double x, double y) { return std::hypot(x, y); }, {OpKind::Hypot});
  return t;
}();

constexpr bool every_math_row_defined() {
  for (const OpRow& r : kOpRows) {
    const bool math = (r.traits & kMath) != 0;
    if (kMathFns.has(r.kind) != (math && r.max_operands == 1)) return false;
    if (kMathFns2.has(r.kind) != (math && r.max_operands == 2)) return false;
    if (math && r.min_operands != r.max_operands) return false;
  }
  return true;
}
static_assert(every_math_row_defined(),
              "a kMath row of ops.def has no definition in semantics.cpp");

}  // namespace

MathFn math_fn(OpKind kind) {
  TESSERA_CHECK(kMathFns.has(kind), "not a math function: ", op_name(kind));
  return kMathFns[kind];
}

MathFn2 math_fn2(OpKind kind) {
  TESSERA_CHECK(kMathFns2.has(kind), "not a binary math function: ", op_name(kind));
  return kMathFns2[kind];
}

}  // namespace tessera::ir
