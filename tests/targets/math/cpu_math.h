/// \file The PTX math algorithms (targets/math/algorithms.h) on plain C++ floats, and the
/// accuracy measure (ulps against a wider reference) that the tests apply to them.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "targets/math/library.h"

namespace math_test {

/// The backend of math_algorithms.h over T = float or double (IEEE, round to nearest even).
template <class T>
struct CpuMath {
  static constexpr bool kSingle = std::is_same_v<T, float>;
  using F = T;
  using I = std::conditional_t<kSingle, int32_t, int64_t>;
  using UI = std::make_unsigned_t<I>;
  using U = uint64_t;
  using B = bool;

  F c(double v) const { return static_cast<F>(v); }
  I ci(int64_t v) const { return static_cast<I>(v); }
  U cu(uint64_t v) const { return v; }
  /// fma_from_products instead of a fused fma (what the SPIR-V target does without Cap::FusedFma).
  bool unfused = false;
  F fma(F a, F b, F c) const {
    return unfused ? tessera::math::fma_from_products(*this, a, b, c) : std::fma(a, b, c);
  }
  F rint(F a) const { return std::nearbyint(a); }
  F abs(F a) const { return std::fabs(a); }
  F sqrt(F a) const { return std::sqrt(a); }
  F copysign(F a, F b) const { return std::copysign(a, b); }
  B isnan(F a) const { return std::isnan(a); }
  template <class X>
  X sel(B c, X a, X b) const {
    return c ? a : b;
  }
  B and_(B a, B b) const { return a && b; }
  B or_(B a, B b) const { return a || b; }
  B not_(B a) const { return !a; }
  I bits(F a) const { return std::bit_cast<I>(a); }
  F from_bits(I a) const { return std::bit_cast<F>(a); }
  /// Toward zero for values in range; NaN and out-of-range values give 0 (as math.cpp's).
  I to_int(F a) const {
    F limit = kSingle ? F(2147483648.0) : F(9223372036854775808.0);
    return std::fabs(a) < limit ? static_cast<I>(a) : I{0};
  }
  F to_float(I a) const { return static_cast<F>(a); }
  I shl(I a, int n) const { return static_cast<I>(static_cast<UI>(a) << n); }
  I shr_s(I a, int n) const { return a >> n; }
  I shr_u(I a, int n) const { return static_cast<I>(static_cast<UI>(a) >> n); }
  B lt_s(I a, I b) const { return a < b; }
  B eq(I a, I b) const { return a == b; }
  U shl(U a, U n) const { return n >= 64 ? 0 : a << n; }
  U shr(U a, U n) const { return n >= 64 ? 0 : a >> n; }
  U clz(U a) const { return static_cast<U>(std::countl_zero(a)); }
  U urem(U a, U b) const { return a % b; }
  B lt_u(U a, U b) const { return a < b; }
  B eq(U a, U b) const { return a == b; }
  U min_u(U a, U b) const { return a < b ? a : b; }
  U u_from_i(I a) const { return static_cast<UI>(a); }
  I i_from_u(U a) const { return static_cast<I>(a); }
  F f_from_u(U a) const { return static_cast<F>(a); }
  U table(U i) const { return tessera::math::kTwoOverPiWords[i]; }
  /// The hardware 2^x (PTX ex2.approx.f32: within 2 ulp of 2^x), emulated at its worst: the
  /// correctly rounded value moved `ex2_skew` floats away (up if positive), and back toward 2^x
  /// while that leaves the 2-ulp bound.
  int ex2_skew = 0;
  F ex2(F a) const;
  template <class A, class Bf>
  F if_else(B c, A a, Bf b) const {
    return c ? a() : b();
  }
  template <size_t N, class C, class Bd>
  std::array<U, N> loop(std::array<U, N> s, C cond, Bd body) const {
    while (cond(s)) s = body(s);
    return s;
  }
};

/// |got - want| in units of the last place of T at `want` (subnormal spacing below the normal
/// range); 0 when both are the same NaN class or the same infinity; huge when one is NaN.
template <class T>
double ulp_error(T got, long double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) == std::isnan(want) ? 0 : 1e30;
  if (std::isinf(want) || std::isinf(got)) {
    if (static_cast<long double>(got) == want) return 0;
    // a finite reference beyond T's range rounds to infinity
    long double w = std::fabs(want);
    return w > static_cast<long double>(std::numeric_limits<T>::max()) && std::isinf(got) &&
                   std::signbit(got) == std::signbit(want)
               ? 0
               : 1e30;
  }
  int e = 0;
  std::frexp(want, &e);
  int emin = std::numeric_limits<T>::min_exponent;
  if (e < emin) e = emin;
  long double ulp = std::ldexp(1.0L, e - std::numeric_limits<T>::digits);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - want) / ulp);
}

template <class T>
T CpuMath<T>::ex2(T a) const {
  long double want = exp2l(static_cast<long double>(a));
  T got = static_cast<T>(want);
  if (std::isnan(a) || std::isinf(got) || ex2_skew == 0) return got;
  const T toward = ex2_skew > 0 ? std::numeric_limits<T>::infinity() : T(0);
  for (int i = 0; i < std::abs(ex2_skew); ++i) {
    T next = std::nextafter(got, toward);
    if (std::isinf(next) || ulp_error<T>(next, want) > 2.0) break;
    got = next;
  }
  return got;
}

}  // namespace math_test
