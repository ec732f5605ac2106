/// \file The math library (targets/math/algorithms.h): its algorithms' accuracy on the CPU (the
/// same code builds the PTX target's LLVM IR and the SPIR-V target's instructions, and every step
/// is an IEEE operation, so a GPU computes the same bits), against wider references; exact fmod;
/// special values.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "cpu_math.h"

namespace math_test {
namespace {

using tessera::math::Algorithms;

template <class T>
using Fn = T (*)(Algorithms<CpuMath<T>>&, T);

/// The worst ulp error of `f` against `ref` over `n` inputs, half uniform in [lo, hi] and half
/// log-uniform in magnitude (down to 2^-60), with the sign of the range.
template <class T>
double worst_ulp(Fn<T> f, long double (*ref)(long double), double lo, double hi, int n,
                 bool unfused = false) {
  CpuMath<T> m;
  m.unfused = unfused;
  Algorithms<CpuMath<T>> a(m);
  std::mt19937_64 rng(1234);
  double worst = 0;
  T at = 0;
  double amax = std::max(std::fabs(lo), std::fabs(hi));
  for (int i = 0; i < n; ++i) {
    T x;
    if (i % 2) {
      x = static_cast<T>(std::uniform_real_distribution<double>(lo, hi)(rng));
    } else {
      x = static_cast<T>(
          std::exp2(std::uniform_real_distribution<double>(-60, std::log2(amax))(rng)));
      if (lo < 0 && (rng() & 1)) x = -x;
      if (x < lo || x > hi) continue;
    }
    double e = ulp_error<T>(f(a, x), ref(static_cast<long double>(x)));
    if (e > worst) {
      worst = e;
      at = x;
    }
  }
  std::string type = sizeof(T) == 4 ? "f32" : "f64";
  MESSAGE(type, " [", lo, ", ", hi, "]: ", worst, " ulp at ", static_cast<double>(at));
  return worst;
}

template <class T>
void check_accuracy(int n, bool unfused = false) {
  using A = Algorithms<CpuMath<T>>;
  CAPTURE(unfused);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.exp(x); }, expl, -110, 90, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.exp(x); }, expl, -760, 720, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.exp2(x); }, exp2l, -160, 140, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.log(x); }, logl, 0, 1e30, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.log(x); }, logl, 0.5, 2, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.log1p(x); }, log1pl, -1, 1, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.log1p(x); }, log1pl, -0.001, 0.001, n, unfused) <=
        1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.log1p(x); }, log1pl, 0, 1e30, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.log2(x); }, log2l, 0, 1e30, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.log2(x); }, log2l, 0.5, 2, n, unfused) <= 1.0);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.sin(x); }, sinl, -100, 100, n, unfused) <= 1.5);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.cos(x); }, cosl, -100, 100, n, unfused) <= 1.5);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.sin(x); }, sinl, -1e30, 1e30, n, unfused) <=
        1.5);  // Payne-Hanek
  CHECK(worst_ulp<T>([](A& a, T x) { return a.cos(x); }, cosl, 1e4, 1e12, n, unfused) <= 1.5);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.tanh(x); }, tanhl, -30, 30, n, unfused) <= 2.5);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.tanh(x); }, tanhl, -1, 1, n, unfused) <= 2.5);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.erf(x); }, erfl, -8, 8, n, unfused) <= 1.5);
  CHECK(worst_ulp<T>([](A& a, T x) { return a.erf(x); }, erfl, -1.5, 1.5, n, unfused) <= 1.5);
}

TEST_CASE("math: f32 exp, exp2, log, log1p, log2 <= 1 ulp, sin, cos, erf <= 1.5, tanh <= 2.5") {
  check_accuracy<float>(40000);
}

TEST_CASE("math: the same bounds with fma_from_products for fma (SPIR-V without a fused Fma)") {
  check_accuracy<float>(20000, true);
  check_accuracy<double>(10000, true);
}

TEST_CASE("math: f64 exp, exp2, log, log1p, log2 <= 1 ulp, sin, cos, erf <= 1.5, tanh <= 2.5") {
  check_accuracy<double>(20000);
}

/// f32 exp and exp2 from the hardware's ex2 (what the PTX target emits at f32): within the tile
/// IR's 4 ulp (within 3) with ex2 at its documented worst (2 ulp) in either direction, within 1
/// where ex2 rounds correctly.
TEST_CASE("math: f32 exp from ex2.approx <= 3 ulp with ex2 2 ulp off either way") {
  for (int skew : {-2, 0, 2}) {
    CAPTURE(skew);
    CpuMath<float> m;
    m.ex2_skew = skew;
    Algorithms<CpuMath<float>> a(m);
    std::mt19937_64 rng(99);
    double worst = 0;
    float at = 0;
    for (int i = 0; i < 400000; ++i) {
      // uniform over [-110, 95], where the result spans subnormal, normal and overflow
      float x = static_cast<float>(std::uniform_real_distribution<double>(-110, 95)(rng));
      double e = ulp_error<float>(a.exp_hw(x), expl(static_cast<long double>(x)));
      if (e > worst) {
        worst = e;
        at = x;
      }
    }
    MESSAGE("exp_hw, ex2 skew ", skew, ": ", worst, " ulp at ", at);
    CHECK(worst <= (skew == 0 ? 1.0 : 3.0));
    const float inf = std::numeric_limits<float>::infinity();
    CHECK(a.exp_hw(-inf) <= std::numeric_limits<float>::denorm_min() * std::abs(skew));
    CHECK(a.exp_hw(inf) == inf);
    CHECK(a.exp_hw(100.0f) == inf);
    CHECK(std::isnan(a.exp_hw(std::numeric_limits<float>::quiet_NaN())));
    if (skew == 0) CHECK(a.exp_hw(0.0f) == 1);
  }
}

TEST_CASE("math: hard cases of the trigonometric reduction") {
  CpuMath<double> md;
  Algorithms<CpuMath<double>> ad(md);
  double x = std::ldexp(6381956970095103.0, 797);  // the double closest to a multiple of pi/2
  CHECK(ulp_error<double>(ad.sin(x), sinl(x)) <= 1.5);
  CHECK(ulp_error<double>(ad.cos(x), cosl(x)) <= 1.5);
  CpuMath<float> mf;
  Algorithms<CpuMath<float>> af(mf);
  float y = std::ldexp(16367173.0f, 72);
  CHECK(ulp_error<float>(af.sin(y), sinl(y)) <= 1.5);
  CHECK(ulp_error<float>(af.cos(y), cosl(y)) <= 1.5);
  float big = std::numeric_limits<float>::max();
  CHECK(ulp_error<float>(af.sin(big), sinl(big)) <= 1.5);
}

template <class T>
void check_specials() {
  CpuMath<T> m;
  Algorithms<CpuMath<T>> a(m);
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const T tiny = std::numeric_limits<T>::denorm_min();
  CHECK(a.exp(-inf) == 0);
  CHECK(a.exp(inf) == inf);
  CHECK(std::isnan(a.exp(nan)));
  CHECK(a.exp(T(0)) == 1);
  CHECK(a.exp2(T(-1)) == T(0.5));
  CHECK(a.exp2(T(10)) == T(1024));
  CHECK(a.log(T(0)) == -inf);
  CHECK(a.log(T(-0.0)) == -inf);
  CHECK(std::isnan(a.log(T(-1))));
  CHECK(a.log(inf) == inf);
  CHECK(a.log(T(1)) == 0);
  CHECK(a.log1p(T(-1)) == -inf);
  CHECK(std::isnan(a.log1p(T(-2))));
  CHECK(std::isnan(a.log1p(nan)));
  CHECK(a.log1p(inf) == inf);
  CHECK(std::signbit(a.log1p(T(-0.0))));
  CHECK(a.log1p(tiny) == tiny);
  CHECK(a.log1p(std::numeric_limits<T>::max()) < inf);
  CHECK(a.log2(T(8)) == 3);
  CHECK(a.log2(tiny) == (sizeof(T) == 4 ? -149 : -1074));
  CHECK(std::isnan(a.sin(inf)));
  CHECK(std::isnan(a.cos(-inf)));
  CHECK(std::signbit(a.sin(T(-0.0))));
  CHECK(a.sin(tiny) == tiny);
  CHECK(a.cos(T(0)) == 1);
  CHECK(a.tanh(inf) == 1);
  CHECK(a.tanh(-inf) == -1);
  CHECK(std::signbit(a.tanh(T(-0.0))));
  CHECK(a.erf(inf) == 1);
  CHECK(a.erf(-inf) == -1);
  CHECK(std::signbit(a.erf(T(-0.0))));
  CHECK(std::isnan(a.erf(nan)));
}

TEST_CASE("math: special values") {
  check_specials<float>();
  check_specials<double>();
}

template <class T>
void check_fmod(int n) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  CpuMath<T> m;
  Algorithms<CpuMath<T>> a(m);
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> e(-150, 127);
  int wrong = 0;
  auto same = [](T x, T y) {
    return (std::isnan(x) && std::isnan(y)) || std::bit_cast<Bits>(x) == std::bit_cast<Bits>(y);
  };
  for (int i = 0; i < n; ++i) {
    T x = static_cast<T>(std::exp2(e(rng))), y = static_cast<T>(std::exp2(e(rng)));
    if (rng() & 1) x = -x;
    if (rng() & 1) y = -y;
    if (!same(a.fmod(x, y), std::fmod(x, y))) ++wrong;
  }
  const T specials[] = {0,
                        T(-0.0),
                        1,
                        -1,
                        3,
                        T(0.5),
                        std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(),
                        std::numeric_limits<T>::denorm_min(),
                        std::numeric_limits<T>::max()};
  for (T x : specials)
    for (T y : specials) {
      CAPTURE(x);
      CAPTURE(y);
      CHECK(same(a.fmod(x, y), std::fmod(x, y)));
    }
  CHECK(wrong == 0);
}

TEST_CASE("math: fmod is exact (bit for bit C's fmod)") {
  check_fmod<float>(20000);
  check_fmod<double>(5000);
}

}  // namespace
}  // namespace math_test
