/// \file targets/math/functions.h: the library's list agrees with ops.def (the same check fails
/// the build), every kMath row is computed one way, and apply reaches the named algorithm.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/ir/op_table.h"
#include "cpu_math.h"
#include "targets/math/functions.h"

namespace math_test {
namespace {

using tessera::ir::OpKind;
namespace math = tessera::math;

static_assert(math::agrees_with_ops_def());
static_assert(math::function(OpKind::Log1p) == math::Fn::Log1p);
static_assert(math::function(OpKind::Rem) == math::Fn::Fmod);
static_assert(math::function(OpKind::Sqrt) == math::Fn::None);
static_assert(math::function(OpKind::Add) == math::Fn::None);

TEST_CASE("math functions: every kMath row is the library's or native, with its arity and name") {
  int library = 0, native = 0;
  for (const tessera::ir::OpRow& r : tessera::ir::kOpRows) {
    const math::Fn f = math::function(r.kind);
    const std::string op(tessera::ir::op_name(r.kind));
    CAPTURE(op);
    if ((r.traits & tessera::ir::kMath) == 0) {
      CHECK_FALSE(math::is_native(r.kind));
      if (r.kind != OpKind::Rem) CHECK(f == math::Fn::None);
      continue;
    }
    CHECK(math::is_native(r.kind) != (f != math::Fn::None));
    if (math::is_native(r.kind)) {
      ++native;
      continue;
    }
    ++library;
    CHECK(math::arity(f) == r.min_operands);
    CHECK(std::string(math::name(f)) == op);  // the emitted function is named after the op
  }
  CHECK(native == 4);    // sqrt, rsqrt, floor, ceil
  CHECK(library >= 21);  // exp ... erfinv, pow, atan2, hypot (more as ops.def grows)
  CHECK(std::string(math::name(math::Fn::Fmod)) == "fmod");
  CHECK(math::arity(math::Fn::Fmod) == 2);
  CHECK(math::name(math::Fn::None).empty());
}

TEST_CASE("math functions: apply runs the algorithm the op kind names (f64, plain C++)") {
  CpuMath<double> m;
  math::Algorithms<CpuMath<double>> a(m);
  auto at = [&](OpKind k, double x, double y) { return math::apply(a, math::function(k), x, y); };
  CHECK(at(OpKind::Exp, 1.0, 0) == doctest::Approx(std::exp(1.0)).epsilon(1e-15));
  CHECK(at(OpKind::Log1p, 1e-10, 0) == doctest::Approx(std::log1p(1e-10)).epsilon(1e-15));
  CHECK(at(OpKind::Sin, 1e30, 0) == doctest::Approx(std::sin(1e30)).epsilon(1e-15));
  CHECK(at(OpKind::Cbrt, -27.0, 0) == doctest::Approx(-3.0).epsilon(1e-15));
  CHECK(at(OpKind::Rem, 7.5, 2.0) == 1.5);  // fmod is exact
  CHECK(at(OpKind::Pow, 2.0, 10.0) == doctest::Approx(1024.0).epsilon(1e-15));
  CHECK(at(OpKind::Atan2, 1.0, -1.0) == doctest::Approx(std::atan2(1.0, -1.0)).epsilon(1e-15));
  CHECK(at(OpKind::Hypot, 3.0, 4.0) == doctest::Approx(5.0).epsilon(1e-15));
}

}  // namespace
}  // namespace math_test
