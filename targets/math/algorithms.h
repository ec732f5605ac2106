/// \file The math functions of both targets, written once as algorithms over an arithmetic
/// backend and run three ways: targets/ptx/math.cpp instantiates them with a backend that emits
/// LLVM IR, targets/spirv/math_backend.cpp with one over the SPIR-V Builder, and
/// tests/targets/math with plain C++ floats, which measures their accuracy on millions of inputs
/// without a GPU. (Debian's LLVM ships no libdevice, users' machines have none either, and
/// GLSL.std.450 has no 64-bit exp, log, sin ...) A target picks a native instruction instead where
/// its capabilities make one accurate enough (exp_hw: PTX ex2.approx); everything else is here.
/// The folder holds no target's code, so both targets may include it (scripts/check-layering).
///
/// This header declares the library; its functions are defined by family in exp_log.h, trig.h,
/// erf.h and algebraic.h, which library.h gathers (include library.h to instantiate it).
///
/// A backend M for one format (M::kSingle: f32, else f64) provides the value types F (float),
/// I (integer of the float's width), U (u64) and B (predicate), the operators + - * / on F,
/// + - * & | ^ on I and U, < <= > >= on F, and:
///   c(double) ci(int64) cu(uint64)       constants (c rounds to the format)
///   fma rint abs copysign isnan          on F (rint: to nearest even)
///   sel(B, X, X)  and_ or_ not_          selects and predicate logic
///   bits(F)->I  from_bits(I)->F  to_int(F)->I (of an integral F; 0 if NaN or out of range)
///   to_float(I)->F (signed)
///   shl/shr_s/shr_u(I, int)  lt_s(I, I)  eq(I, I)
///   shl/shr(U, U) (a count >= 64 gives 0)  clz(U)  urem(U, U)  lt_u(U, U)  eq(U, U)  min_u
///   u_from_i(I) (zero-extending)  i_from_u(U) (truncating)  f_from_u(U) (rounding)  table(U)
///   if_else(B, then_fn, else_fn)   runs one of two functions returning F (a branch on a GPU)
///   sqrt(F)  a square root within a few ulp (the algorithms correct it by one Newton step)
///   ex2(F)   a hardware 2^x within 2 ulp (only for exp_hw, which only f32 uses)
///   loop(std::array<U, N> init, cond_fn, body_fn)   a while loop over N u64 values
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>

#include "core/support/math_coefficients.h"

namespace tessera::math {

/// Format facts and coefficient tables, by precision.
template <bool Single>
struct Format;

template <>
struct Format<true> {
  static constexpr int kMant = 23, kBias = 127, kWords = 4, kWindowFraction = 62;
  static constexpr double kFastTrig = 105615.0;  // |x| above: Payne-Hanek reduction
  static constexpr double kExpLo = -104.0, kExpHi = 89.0, kExp2Lo = -151.0, kExp2Hi = 129.0;
  static constexpr double kTanhClamp = 10.0;
  static constexpr uint64_t kHiMask = 0xfffff000u;  // log2: the head of f - f^2/2
  static constexpr std::span<const float> exp2 = kExp2F32, expm1 = kExpm1F32, sin = kSinF32,
                                          cos = kCosF32, log = kLogF32, erf_small = kErfSmallF32,
                                          erf_end = kErfEndF32, erf_mid = kErfMidF32;
  static constexpr auto& erf_g = kErfGF32;
  static constexpr auto& pio2 = kPio2F32;
  static constexpr auto& ln2 = kLn2F32;
  static constexpr auto& log2e = kLog2eF32;
  static constexpr auto& log2e_split = kLog2eSplitF32;
};

template <>
struct Format<false> {
  static constexpr int kMant = 52, kBias = 1023, kWords = 7, kWindowFraction = 126;
  static constexpr double kFastTrig = 1073741824.0;
  static constexpr double kExpLo = -746.0, kExpHi = 710.0, kExp2Lo = -1076.0, kExp2Hi = 1025.0;
  static constexpr double kTanhClamp = 20.0;
  static constexpr uint64_t kHiMask = 0xffffffff00000000u;
  static constexpr std::span<const double> exp2 = kExp2F64, expm1 = kExpm1F64, sin = kSinF64,
                                           cos = kCosF64, log = kLogF64, erf_small = kErfSmallF64,
                                           erf_end = kErfEndF64, erf_mid = kErfMidF64;
  static constexpr auto& erf_g = kErfGF64;
  static constexpr auto& pio2 = kPio2F64;
  static constexpr auto& ln2 = kLn2F64;
  static constexpr auto& log2e = kLog2eF64;
  static constexpr auto& log2e_split = kLog2eSplitF64;
};

/// a * b + c for a backend whose fma may round twice (Vulkan lets GLSL Fma do so; lavapipe does):
/// Dekker's exact product p + e (Veltkamp's split, no fma needed), the exact sum s + t of p and c,
/// then s + (t + e). Within about an ulp of the fused result, and exact where the algorithms need
/// exactness: the error of a product (c = -round(a b) gives e) and a reduction step whose result
/// is representable. Operands must be below 2^(emax - 13) (f32) / 2^(emax - 28) (f64) in
/// magnitude, which every fma of Algorithms meets where its result is used.
template <class M, class F>
F fma_from_products(M& m, F a, F b, F c) {
  const F split = m.c(M::kSingle ? 4097.0 : 134217729.0);  // 2^12 + 1, 2^27 + 1
  auto halves = [&](F v, F& hi, F& lo) {
    F g = split * v;
    hi = g - (g - v);
    lo = v - hi;
  };
  F ah, al, bh, bl;
  halves(a, ah, al);
  halves(b, bh, bl);
  F p = a * b;
  F e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
  F s = p + c;
  F v = s - p;
  F t = (p - (s - v)) + (c - v);
  return s + (t + e);
}

/// The library over backend M: each public function emits (or, over plain floats, computes) one
/// function of the tile IR's math ops (functions.h maps the op kinds to them).
template <class M>
class Algorithms {
 public:
  using F = typename M::F;
  using I = typename M::I;
  using U = typename M::U;
  using B = typename M::B;
  using Fmt = Format<M::kSingle>;
  static constexpr int kMant = Fmt::kMant, kBias = Fmt::kBias;

  explicit Algorithms(M& m) : m(m) {}

  // Exponentials and logarithms (exp_log.h).
  F exp(F x);
  F exp2(F x);
  F exp_hw(F x);
  F log(F x);
  F log1p(F x);
  F log2(F x);
  F expm1(F x);
  F log10(F x);
  F tanh(F x);
  F sinh(F x);
  F cosh(F x);
  F pow(F x, F y);
  // Trigonometric functions (trig.h).
  F sin(F x);
  F cos(F x);
  F atan(F x);
  F asin(F x);
  F acos(F x);
  F atan2(F y, F x);
  // The error function and its inverse (erf.h).
  F erf(F x);
  F erfinv(F x);
  // Roots and remainders (algebraic.h).
  F cbrt(F x);
  F hypot(F x, F y);
  F fmod(F x, F y);

 private:
  /// A value as hi + lo: hi rounded, lo (tiny) what the rounding lost.
  struct Parts {
    F hi, lo;
  };
  struct Reduced {
    F f, s, hfsq, R;
    I e;
  };

  M& m;

  // Helpers of every family.
  template <class T>
  F poly(std::span<const T> c, F x) {
    F r = m.c(c[c.size() - 1]);
    for (size_t k = c.size() - 1; k-- > 0;) r = m.fma(r, x, m.c(c[k]));
    return r;
  }

  /// A constant as the nearest value of the format and the (rounded) remainder.
  static constexpr std::array<double, 2> split(long double v) {
    using T = std::conditional_t<M::kSingle, float, double>;
    T hi = static_cast<T>(v);
    return {hi, static_cast<double>(v - hi)};
  }

  /// The backend's square root, corrected by one Newton step with an exact residual (the
  /// backend's may be a few ulp off: GLSL Sqrt). 0, inf and NaN pass through.
  F sqrt(F s) {
    F h = m.sqrt(s);
    F fixed = h + m.fma(-h, h, s) * (m.c(0.5) / h);
    return m.sel(m.and_(h > m.c(0), h < m.c(INFINITY)), fixed, h);
  }

  /// x limited to [lo, hi]; NaN passes through.
  F clamp(F x, double lo, double hi) {
    x = m.sel(x > m.c(hi), m.c(hi), x);
    return m.sel(x < m.c(lo), m.c(lo), x);
  }

  /// 2^k as a float, for k in the normal exponent range.
  F pow2(I k) { return m.from_bits(m.shl(k + m.ci(kBias), kMant)); }
  /// p * 2^k for k in [-2 (bias - 1), 2 bias]: two exact scalings (one rounding if subnormal).
  F ldexp(F p, I k) {
    I k1 = m.shr_s(k, 1);
    return p * pow2(k1) * pow2(k - k1);
  }

  // Reductions and pieces, by the file that defines them.
  // exp_log.h
  Parts times_log2e(F x);
  F half_exp(F a);
  Parts log2_parts(F a);
  F exp2_parts(F hi, F lo);
  F expm1_nonneg(F y);
  Reduced reduce_log(F x);
  F log_specials(F x, F y);
  // trig.h
  F atan_ratio(F ay, F ax);
  F trig_kernel(F r, F t, I q, bool cosine);
  F trig(F x, bool cosine);
  template <size_t N>
  U window64(const std::array<U, N>& limbs, U pos, size_t lo);
  std::array<U, 2> two_over_pi_window(F x);
  F payne_hanek(F x, bool cosine);
  // erf.h
  F erfc_scaled(F a);
};

}  // namespace tessera::math
