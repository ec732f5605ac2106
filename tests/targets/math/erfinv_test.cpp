/// \file erfinv in the math library (Triton's libdevice.erfinv): its worst ulp over a dense sweep
/// of (-1, 1) and the approach to +-1, fused and unfused, against a long-double reference; and
/// its special values.
#include <doctest/doctest.h>

#include <string>

#include "cpu_math.h"

namespace math_test {
namespace {

using tessera::math::Algorithms;

/// erfinv in long double: Newton steps on log(erfc(t)) = log(1 - a) from a rough guess where
/// a >= 1/2 (erfc keeps 1 - a exact there), then Halley steps on erf(t) = a.
long double erfinv_ref(long double y) {
  const long double a = std::fabs(y);
  if (std::isnan(y) || a > 1) return NAN;
  if (a == 1) return std::copysign(static_cast<long double>(INFINITY), y);
  if (a == 0) return y;
  const long double q = 1 - a, k = 1.12837916709551257389615890312154517L;  // 2 / sqrt(pi)
  long double t = a < 0.5L ? a * 0.886L : std::sqrt(-std::log(q * (1 + a)));
  if (a >= 0.5L)
    for (int i = 0; i < 10; ++i) {
      const long double c = erfcl(t);
      t += (std::log(c) - std::log(q)) * c / (k * expl(-t * t));
    }
  for (int i = 0; i < 4; ++i) {
    const long double f = a < 0.5L ? erfl(t) - a : q - erfcl(t);
    const long double d = f / (k * expl(-t * t));
    t -= d / (1 + t * d);
  }
  return std::copysign(t, y);
}

/// The worst ulp error of erfinv over `n` evenly spaced points of (-1, 1), the points
/// 1 - 2^-k (1 + j/64) of both signs down to the format's last value below 1, and 2^-k.
template <class T>
double worst_erfinv(int n, bool unfused) {
  CpuMath<T> m;
  m.unfused = unfused;
  Algorithms<CpuMath<T>> a(m);
  double worst = 0;
  T at = 0;
  auto check = [&](T x) {
    double e = ulp_error<T>(a.erfinv(x), erfinv_ref(x));
    if (e > worst) {
      worst = e;
      at = x;
    }
  };
  for (int i = 0; i < n; ++i) check(static_cast<T>(-1 + 2 * (i + 0.5) / n));
  for (int k = 1; k <= std::numeric_limits<T>::digits; ++k)
    for (int j = 0; j < 64; ++j) {
      T x = static_cast<T>(1 - std::ldexp(1 + j / 64.0, -k));
      if (x >= 1) continue;
      check(x);
      check(-x);
    }
  check(std::nextafter(T(1), T(0)));
  for (int k = 1; k < std::numeric_limits<T>::max_exponent + 20; ++k)
    check(static_cast<T>(std::ldexp(1.2345, -k)));
  const std::string what =
      std::string(sizeof(T) == 4 ? "f32" : "f64") + (unfused ? " unfused" : "");
  MESSAGE(what, ": ", worst, " ulp at ", static_cast<double>(at));
  return worst;
}

TEST_CASE("math: erfinv <= 2.5 ulp over (-1, 1) and up to +-1 (f32, f64, fused or not)") {
  CHECK(worst_erfinv<float>(1 << 19, false) <= 2.5);
  CHECK(worst_erfinv<float>(1 << 17, true) <= 2.5);
  CHECK(worst_erfinv<double>(1 << 17, false) <= 2.5);
  CHECK(worst_erfinv<double>(1 << 15, true) <= 2.5);
}

template <class T>
void check_erfinv_specials() {
  CpuMath<T> m;
  Algorithms<CpuMath<T>> a(m);
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  CHECK(a.erfinv(T(1)) == inf);
  CHECK(a.erfinv(T(-1)) == -inf);
  CHECK(a.erfinv(T(0)) == 0);
  CHECK(std::signbit(a.erfinv(T(-0.0))));
  CHECK(std::isnan(a.erfinv(T(1.5))));
  CHECK(std::isnan(a.erfinv(std::nextafter(T(-1), T(-2)))));
  CHECK(std::isnan(a.erfinv(inf)));
  CHECK(std::isnan(a.erfinv(-inf)));
  CHECK(std::isnan(a.erfinv(nan)));
  const T tiny = std::numeric_limits<T>::denorm_min();
  CHECK(ulp_error<T>(a.erfinv(tiny), erfinv_ref(tiny)) <= 1);
  // erf(erfinv(x)) comes back to x within erf's bound where erf is not flat
  for (T x : {T(0.1), T(-0.3), T(0.5), T(0.75)}) CHECK(ulp_error<T>(a.erf(a.erfinv(x)), x) <= 2.5);
}

TEST_CASE("math: erfinv special values: +-1 -> +-inf, NaN outside [-1, 1], -0 -> -0") {
  check_erfinv_specials<float>();
  check_erfinv_specials<double>();
}

}  // namespace
}  // namespace math_test
