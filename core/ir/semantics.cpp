/// \file The math ops' definitions (semantics.h), in double precision.
#include "core/ir/semantics.h"

#include <cmath>

#include "core/support/error.h"

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

}  // namespace

MathFn math_fn(OpKind kind) {
  switch (kind) {
    case OpKind::Exp:
      return [](double x) { return std::exp(x); };
    case OpKind::Exp2:
      return [](double x) { return std::exp2(x); };
    case OpKind::Log:
      return [](double x) { return std::log(x); };
    case OpKind::Log2:
      return [](double x) { return std::log2(x); };
    case OpKind::Sqrt:
      return [](double x) { return std::sqrt(x); };
    case OpKind::Rsqrt:
      return [](double x) { return 1.0 / std::sqrt(x); };
    case OpKind::Sin:
      return [](double x) { return std::sin(x); };
    case OpKind::Cos:
      return [](double x) { return std::cos(x); };
    case OpKind::Tanh:
      return [](double x) { return std::tanh(x); };
    case OpKind::Erf:
      return [](double x) { return std::erf(x); };
    case OpKind::Log1p:
      return [](double x) { return std::log1p(x); };
    case OpKind::Expm1:
      return [](double x) { return std::expm1(x); };
    case OpKind::Log10:
      return [](double x) { return std::log10(x); };
    case OpKind::Sinh:
      return [](double x) { return std::sinh(x); };
    case OpKind::Cosh:
      return [](double x) { return std::cosh(x); };
    case OpKind::Asin:
      return [](double x) { return std::asin(x); };
    case OpKind::Acos:
      return [](double x) { return std::acos(x); };
    case OpKind::Atan:
      return [](double x) { return std::atan(x); };
    case OpKind::Cbrt:
      return [](double x) { return std::cbrt(x); };
    case OpKind::Erfinv:
      return erfinv;
    case OpKind::Floor:
      return [](double x) { return std::floor(x); };
    case OpKind::Ceil:
      return [](double x) { return std::ceil(x); };
    default:
      TESSERA_CHECK(false, "not a math function: ", ir::op_name(kind));
      return nullptr;
  }
}

MathFn2 math_fn2(OpKind kind) {
  switch (kind) {
    case OpKind::Pow:
      return [](double x, double y) { return std::pow(x, y); };
    case OpKind::Atan2:
      return [](double x, double y) { return std::atan2(x, y); };
    case OpKind::Hypot:
      return [](double x, double y) { return std::hypot(x, y); };
    default:
      TESSERA_CHECK(false, "not a binary math function: ", ir::op_name(kind));
      return nullptr;
  }
}

}  // namespace tessera::ir
