/// \file The math functions of both targets, written once as algorithms over an arithmetic
/// backend and run three ways: targets/ptx/math.cpp instantiates them with a backend that emits
/// LLVM IR, targets/spirv/math_backend.cpp with one over the SPIR-V Builder, and
/// tests/targets/math with plain C++ floats, which measures their accuracy on millions of inputs
/// without a GPU. (Debian's LLVM ships no libdevice, users' machines have none either, and
/// GLSL.std.450 has no 64-bit exp, log, sin ...) A target picks a native instruction instead where
/// its capabilities make one accurate enough (exp_hw: PTX ex2.approx); everything else is here.
/// The folder holds no target's code, so both targets may include it (scripts/check-layering).
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

  F exp(F x) {
    Parts p = times_log2e(clamp(x, Fmt::kExpLo, Fmt::kExpHi));
    return exp2_parts(p.hi, p.lo);
  }

  F exp2(F x) { return exp2_parts(clamp(x, Fmt::kExp2Lo, Fmt::kExp2Hi), m.c(0)); }

  /// e^x from the backend's hardware 2^x, `M::ex2` (PTX ex2.approx.f32: within 2 ulp over the
  /// whole range, subnormal results included): hi = x log2(e) rounded and lo, its rounding error
  /// (|lo| <= 2^-17 where the result is finite and nonzero), give e^x = 2^hi (1 + lo ln 2) up to
  /// 2^-34 relative; one fma applies the correction with a single rounding: within 2.5 ulp (the
  /// tile IR allows 4). Where 2^hi is infinite the fma gives NaN (inf * -t + inf), so a NaN from
  /// a non-NaN 2^hi takes 2^hi. Six instructions and ex2 instead of exp's twenty-five.
  F exp_hw(F x) {
    Parts p = times_log2e(clamp(x, Fmt::kExpLo, Fmt::kExpHi));
    F e = m.ex2(p.hi);
    F y = m.fma(e, p.lo * m.c(0.6931471805599453), e);
    return m.sel(m.isnan(y), e, y);
  }

  F log(F x) {
    Reduced r = reduce_log(x);
    F dk = m.to_float(r.e);
    F l1p = r.f - (r.hfsq - (r.s * (r.hfsq + r.R) + dk * m.c(Fmt::ln2[1])));
    return log_specials(x, dk * m.c(Fmt::ln2[0]) + l1p);
  }

  /// log(1 + x), accurate for small x: u = 1 + x rounded, c the exact rounding error of that sum
  /// (Knuth's two-sum), log(u) from the reduction of `log` with c / u added to its small tail
  /// (log(u + c) = log(u) + c/u + O(c^2)). Tiny x gives x, -0 gives -0, -1 gives -inf.
  F log1p(F x) {
    F u = x + m.c(1);
    F bb = u - m.c(1);
    F c = (m.c(1) - (u - bb)) + (x - bb);
    Reduced r = reduce_log(u);
    F dk = m.to_float(r.e);
    F tail = r.s * (r.hfsq + r.R) + (dk * m.c(Fmt::ln2[1]) + c / u);
    F y = log_specials(u, dk * m.c(Fmt::ln2[0]) + (r.f - (r.hfsq - tail)));
    y = m.sel(m.isnan(x), x, y);
    return m.sel(x == m.c(0), x, y);  // log1p(-0) = -0
  }

  F log2(F x) {
    Reduced r = reduce_log(x);
    F hi = m.from_bits(m.bits(r.f - r.hfsq) & m.ci(static_cast<int64_t>(Fmt::kHiMask)));
    F lo = (r.f - hi) - r.hfsq + r.s * (r.hfsq + r.R);
    F val_hi = hi * m.c(Fmt::log2e_split[0]);
    F val_lo = (lo + hi) * m.c(Fmt::log2e_split[1]) + lo * m.c(Fmt::log2e_split[0]);
    F y = m.to_float(r.e);
    F w = y + val_hi;
    val_lo = val_lo + ((y - w) + val_hi);
    return log_specials(x, val_lo + w);
  }

  F sin(F x) {
    F s = trig(x, false);
    return m.sel(x == m.c(0), x, s);  // sin(-0) = -0
  }
  F cos(F x) { return trig(x, true); }

  F tanh(F x) {
    F a = m.abs(x);
    a = m.sel(a > m.c(Fmt::kTanhClamp), m.c(Fmt::kTanhClamp), a);  // tanh(a) rounds to 1 there
    F q = expm1_nonneg(a + a);
    return m.copysign(q / (q + m.c(2)), x);
  }

  F erf(F x) {
    F a = m.abs(x);
    F small = x + x * poly(Fmt::erf_small, x * x);
    F g = erfc_scaled(a);  // before exp: the order of the emitted instructions as before
    F large = m.c(1) - exp(-(a * a)) * g;
    F out = m.sel(a < m.c(Fmt::erf_end.back()), large, m.c(1));
    out = m.sel(a < m.c(1), small, m.copysign(out, x));
    return m.sel(m.isnan(x), x, out);
  }

  /// erfinv(x), the inverse of erf on (-1, 1): a first guess x0 from Giles's single-precision
  /// approximation ("Approximating the erfinv function", 2010: a polynomial in w - 2.5 or
  /// sqrt(w) - 3 with w = -log((1 - |x|)(1 + |x|)), relative error about 4e-7 within f32's range
  /// and a few percent beyond; f64 refines it there by two Newton steps on log(erfc)), then
  /// Halley steps (one at f32, two at f64) on erf(t) = |x|:
  /// t -= d / (1 + t d) with d = (erf(t) - |x|) / erf'(t). The residual is taken without
  /// cancelling: below t = 1 as (t - |x|) + t Q(t^2) (erf's small form; t - |x| is exact), above
  /// as (1 - |x|) - erfc(t) with 1 - |x| exact and erfc(t) = e^(-t^2) G(t) (erf's tail form), so
  /// that d = ((1 - |x|) e^(t^2) - G(t)) sqrt(pi) / 2 keeps its accuracy where erf(t) rounds to
  /// |x|. +-0 gives +-0, +-1 +-inf, |x| > 1 and NaN give NaN.
  F erfinv(F x) {
    F a = m.abs(x);
    F om = m.c(1) - a;  // exact for a >= 1/2
    F w = -log(om * (m.c(1) + a));
    static constexpr double kCentral[] = {1.50140941,     0.246640727,    -0.00417768164,
                                          -0.00125372503, 0.00021858087,  -4.39150654e-06,
                                          -3.5233877e-06, 3.43273939e-07, 2.81022636e-08};
    static constexpr double kTail[] = {2.83297682,    1.00167406,     0.00943887047,
                                       -0.0076224613, 0.00573950773,  -0.00367342844,
                                       0.00134934322, 0.000100950558, -0.000200214257};
    B central = w < m.c(5);
    F wc = m.sel(central, w - m.c(2.5), sqrt(m.sel(central, m.c(9), w)) - m.c(3));
    F p = m.sel(central, m.c(kCentral[8]), m.c(kTail[8]));
    for (size_t k = 8; k-- > 0;) p = m.fma(p, wc, m.sel(central, m.c(kCentral[k]), m.c(kTail[k])));
    F t = p * a;
    const auto [sh, sl] = split(0.886226925452758013649083741671e0L);  // sqrt(pi) / 2
    // Beyond f32's range (|x| > 1 - 2^-24, f64 only) the guess is a few percent off, where
    // Halley's steps on the flat erf would converge slowly: Newton steps on the log of erfc
    // first, t += (log(G(t) / (1 - |x|)) - t^2) G(t) sqrt(pi) / 2, quadratic there.
    for (int step = 0; step < (M::kSingle ? 0 : 2); ++step) {
      F tc = m.sel(t < m.c(1), m.c(1), t);
      F g = erfc_scaled(tc);
      F step_t = (log(g / om) - tc * tc) * g * m.c(sh);
      t = m.sel(a > m.c(0.9999999), t + step_t, t);
    }
    for (int step = 0; step < (M::kSingle ? 1 : 2); ++step) {
      F t2 = t * t;
      F t2e = m.fma(t, t, -t2);                                  // t^2 = t2 + t2e exactly
      F inv = exp(t2) * (m.c(1) + t2e);                          // e^(t^2)
      F near = m.fma(t, poly(Fmt::erf_small, t2), t - a) * inv;  // erf(t) - a, times e^(t^2)
      F tc = m.sel(t < m.c(1), m.c(1), t);
      F far = m.fma(om, inv, -erfc_scaled(tc));  // (1 - a) e^(t^2) - G(t)
      F d = m.sel(t < m.c(1), near, far);
      d = m.fma(d, m.c(sh), d * m.c(sl));
      t = t - d / m.fma(t, d, m.c(1));
    }
    F out = m.sel(a == m.c(1), m.c(INFINITY), t);
    out = m.sel(a == m.c(0), m.c(0), out);
    out = m.copysign(out, x);
    return m.sel(m.or_(a > m.c(1), m.isnan(x)), m.c(NAN), out);
  }

  /// e^x - 1, accurate near 0: x = k ln2 + r (|r| <= ln2/2, k = 0 for small x),
  /// e^x - 1 = 2^k (expm1(r) + 1) - 1, applied as 2 (2^(k-1) expm1(r) + (2^(k-1) - 1/2)) so that
  /// 2^k may reach the format's overflow threshold (as 2 (2^(k-1) (p + 1)) where 2^k - 1 rounds
  /// to 2^k). Below -(mantissa + 3) ln 2 the result rounds
  /// to -1; -0 gives -0; tiny x gives x.
  F expm1(F x) {
    F xc = clamp(x, M::kSingle ? -18.0 : -38.0, Fmt::kExpHi);
    F k = m.rint(xc * m.c(Fmt::log2e[0]));
    F r = m.fma(-k, m.c(Fmt::ln2[0]), xc);
    r = m.fma(-k, m.c(Fmt::ln2[1]), r);
    F p = m.fma(r * r, poly(Fmt::expm1, r), r);
    F half = pow2(m.to_int(k) - m.ci(1));
    F y = m.fma(p, half, half - m.c(0.5)) * m.c(2);
    // where 2^k - 1 rounds to 2^k: no fma (fma_from_products needs operands below 2^(emax - 13))
    y = m.sel(k > m.c(kMant + 2), (p + m.c(1)) * half * m.c(2), y);
    y = m.sel(k == m.c(0), p, y);
    return m.sel(x == m.c(0), x, y);
  }

  /// log10(x): log's reduction x = 2^k (1 + f) as k ln2_hi (exact) plus the small remainder v,
  /// each multiplied by log10(e) (a pair) with its rounding error, and the two sums added.
  F log10(F x) {
    Reduced r = reduce_log(x);
    F dk = m.to_float(r.e);
    F a = dk * m.c(Fmt::ln2[0]);
    F v = r.f - (r.hfsq - (r.s * (r.hfsq + r.R) + dk * m.c(Fmt::ln2[1])));
    const auto [ch, cl] = split(0.434294481903251827651128918916605082L);
    F pa = a * m.c(ch), pv = v * m.c(ch);
    F ea = m.fma(a, m.c(ch), -pa) + a * m.c(cl);
    F ev = m.fma(v, m.c(ch), -pv) + v * m.c(cl);
    F s = pa + pv;
    F bv = s - pa;
    F err = (pa - (s - bv)) + (pv - bv);  // the rounding error of s (two-sum)
    return log_specials(x, s + (err + (ea + ev)));
  }

  /// sinh(x) = sign(x) (t + t / (t + 1)) / 2 with t = expm1(|x|) (below 1 in the form
  /// 2t - t^2 / (t + 1), which does not cancel); above kTanhClamp, where e^-|x| no longer counts,
  /// e^|x| / 2 (2^(|x| log2 e - 1), so that it overflows only where sinh does).
  F sinh(F x) {
    F a = m.abs(x);
    F t = expm1(m.sel(a > m.c(Fmt::kTanhClamp), m.c(0), a));
    F small = m.c(0.5) * m.sel(a < m.c(1), (t + t) - t * t / (t + m.c(1)), t + t / (t + m.c(1)));
    return m.copysign(m.sel(a > m.c(Fmt::kTanhClamp), half_exp(a), small), x);
  }

  /// cosh(x) = 1 + t^2 / (2 (t + 1)) with t = expm1(|x|) below 1, (e + 1/e) / 2 with
  /// e = t + 1 below kTanhClamp, e^|x| / 2 above (as sinh).
  F cosh(F x) {
    F a = m.abs(x);
    F t = expm1(m.sel(a > m.c(Fmt::kTanhClamp), m.c(0), a));
    F w = t + m.c(1);
    F small = m.sel(a < m.c(1), m.c(1) + t * t / (w + w), m.c(0.5) * w + m.c(0.5) / w);
    return m.sel(a > m.c(Fmt::kTanhClamp), half_exp(a), small);
  }

  /// atan(x) = sign(x) atan(|x| / 1) (atan_ratio).
  F atan(F x) { return m.copysign(atan_ratio(m.abs(x), m.c(1)), x); }

  /// asin(x) = sign(x) atan(|x| / sqrt((1 - |x|)(1 + |x|))): NaN beyond [-1, 1], +-pi/2 at +-1.
  F asin(F x) {
    F a = m.abs(x);
    return m.copysign(atan_ratio(a, sqrt((m.c(1) - a) * (m.c(1) + a))), x);
  }

  /// acos(x) = atan(sqrt((1 - |x|)(1 + |x|)) / |x|), or pi minus it for negative x.
  F acos(F x) {
    F a = m.abs(x);
    F r = atan_ratio(sqrt((m.c(1) - a) * (m.c(1) + a)), a);
    const auto [ph, pl] = split(3.14159265358979323846264338327950288L);
    return m.sel(x < m.c(0), (m.c(ph) - r) + m.c(pl), r);
  }

  /// atan2(y, x) with C99 Annex F's special values: the angle of |y| / |x| in [0, pi/2]
  /// (atan_ratio), pi minus it where x's sign bit is set, with y's sign; both zero give 0, both
  /// infinite pi/4 (before the quadrant), NaN anywhere NaN.
  F atan2(F y, F x) {
    F ay = m.abs(y), ax = m.abs(x);
    F r = atan_ratio(ay, ax);
    r = m.sel(m.and_(ay == m.c(0), ax == m.c(0)), m.c(0), r);
    const auto [qh, ql] = split(0.785398163397448309615660845819875721L);
    r = m.sel(m.and_(ay == m.c(INFINITY), ax == m.c(INFINITY)), m.c(qh) + m.c(ql), r);
    const auto [ph, pl] = split(3.14159265358979323846264338327950288L);
    r = m.sel(m.lt_s(m.bits(x), m.ci(0)), (m.c(ph) - r) + m.c(pl), r);
    r = m.copysign(r, y);
    return m.sel(m.or_(m.isnan(x), m.isnan(y)), x + y, r);
  }

  /// The real cube root: |x| = 2^(3q + i) m (m in [1, 2), i in 0..2; subnormals scaled by an
  /// exact power 2^(3n) first), a linear seed for the cube root of y = 2^i m in [1, 8), Halley's
  /// iteration (two steps at f32, three at f64), and a last Newton step whose residual
  /// g^3 - y is exact (products split by fma). +-0, +-inf and NaN give x.
  F cbrt(F x) {
    F a = m.abs(x);
    constexpr int kScale = M::kSingle ? 24 : 54;  // a multiple of 3 above the mantissa width
    B sub = a < m.c(M::kSingle ? 1.1754943508222875e-38 : 2.2250738585072014e-308);
    F as = m.sel(sub, a * m.c(std::ldexp(1.0, kScale)), a);
    I bits = m.bits(as);
    I e = m.shr_s(bits, kMant) - m.ci(kBias) - m.sel(sub, m.ci(kScale), m.ci(0));
    F mant = m.from_bits((bits & m.ci((int64_t{1} << kMant) - 1)) | m.ci(int64_t{kBias} << kMant));
    I q = m.to_int(m.rint((m.to_float(e) - m.c(1)) * m.c(1.0 / 3.0)));
    I i = e - q * m.ci(3);
    F y = mant * m.sel(m.eq(i, m.ci(0)), m.c(1), m.sel(m.eq(i, m.ci(1)), m.c(2), m.c(4)));
    F g = (m.c(1) + m.c(0.2599210498948732) * (mant - m.c(1))) *
          m.sel(m.eq(i, m.ci(0)), m.c(1),
                m.sel(m.eq(i, m.ci(1)), m.c(1.2599210498948732), m.c(1.5874010519681994)));
    for (int step = 0; step < (M::kSingle ? 2 : 3); ++step) {
      F g3 = g * g * g;
      g = g * (g3 + y + y) / (g3 + g3 + y);
    }
    F g2 = g * g;
    F e2 = m.fma(g, g, -g2);
    F g3 = g2 * g;
    F e3 = m.fma(g2, g, -g3) + e2 * g;
    g = g - ((g3 - y) + e3) / (m.c(3) * g2);
    F out = m.copysign(g * pow2(q), x);
    return m.sel(m.or_(m.or_(a == m.c(0), a == m.c(INFINITY)), m.isnan(x)), x, out);
  }

  /// sqrt(x^2 + y^2) without overflow or underflow in between: |x| and |y| scaled by a power of
  /// two where the larger is huge or tiny, the sum of squares, then one Newton step on its square
  /// root with the residual taken exactly (fma-split squares). inf wins over NaN (C99).
  F hypot(F x, F y) {
    F ax = m.abs(x), ay = m.abs(y);
    F a = m.sel(ax < ay, ay, ax), b = m.sel(ax < ay, ax, ay);
    const double big = std::ldexp(1.0, M::kSingle ? 50 : 450);
    const double down = std::ldexp(1.0, M::kSingle ? -90 : -600);
    const double up = std::ldexp(1.0, M::kSingle ? 90 : 600);
    F scale = m.sel(a > m.c(big), m.c(down), m.sel(a < m.c(1 / big), m.c(up), m.c(1)));
    a = a * scale;
    b = b * scale;
    F a2 = a * a, b2 = b * b;
    F ea = m.fma(a, a, -a2), eb = m.fma(b, b, -b2);
    F s = a2 + b2;
    F h = m.sqrt(s);
    // residual a^2 + b^2 - h^2, with a^2 and b^2 as exact pairs
    F hh = h * h;
    F eh = m.fma(h, h, -hh);
    F res = ((a2 - hh) + b2) + ((ea + eb) - eh);
    h = m.sel(h > m.c(0), h + res / (h + h), h);
    F out = h / scale;
    B inf = m.or_(ax == m.c(INFINITY), ay == m.c(INFINITY));
    out = m.sel(m.or_(m.isnan(x), m.isnan(y)), x + y, out);
    return m.sel(inf, m.c(INFINITY), out);
  }

  /// x^y with C99 Annex F's special values: |x|^y = 2^(y log2|x|), log2|x| as a pair good to
  /// about 2^-(p + 8) relative (log's reduction with s = f / (2 + f) split exactly and the atanh
  /// series 2 (s + s^3/3 + ...) summed apart from its leading term), the product with y as a pair,
  /// and 2^(hi + lo) by exp2's reduction. A negative x gives NaN unless y is an integer, and the
  /// result's sign is x's for odd integers y.
  F pow(F x, F y) {
    F ax = m.abs(x);
    // |y| limited where the result is 0 or inf anyway for x != 1 (keeps the products in range).
    const double ylim = std::ldexp(1.0, kMant + 12);
    F yc = m.sel(y > m.c(ylim), m.c(ylim), m.sel(y < m.c(-ylim), m.c(-ylim), y));
    Parts l = log2_parts(ax);
    F zh = yc * l.hi;
    F zl = m.fma(yc, l.hi, -zh) + yc * l.lo;
    B over = zh > m.c(Fmt::kExp2Hi), under = zh < m.c(Fmt::kExp2Lo);
    F r = exp2_parts(clamp(zh, Fmt::kExp2Lo, Fmt::kExp2Hi), m.sel(m.or_(over, under), m.c(0), zl));
    // special operands
    B y_int = m.rint(y) == y;  // false for NaN, true for +-inf
    F half = y * m.c(0.5);
    B y_odd = m.and_(y_int, m.not_(m.rint(half) == half));
    B y_neg = y < m.c(0);
    const F inf = m.c(INFINITY), zero = m.c(0);
    r = m.sel(ax == m.c(0), m.sel(y_neg, inf, zero), r);
    r = m.sel(ax == inf, m.sel(y_neg, zero, inf), r);
    B y_inf = m.abs(y) == inf;
    r = m.sel(y_inf,
              m.sel(m.and_(ax < m.c(1), y_neg), inf, m.sel(m.or_(ax < m.c(1), y_neg), zero, inf)),
              r);
    r = m.sel(m.and_(y_inf, ax == m.c(1)), m.c(1), r);
    B x_neg = m.lt_s(m.bits(x), m.ci(0));
    r = m.sel(m.and_(x_neg, y_odd), -r, r);
    B bad = m.and_(m.and_(x < m.c(0), ax < inf), m.not_(y_int));  // includes y NaN
    r = m.sel(m.or_(bad, m.or_(m.isnan(x), m.isnan(y))), x + y + m.c(NAN), r);
    return m.sel(m.or_(y == m.c(0), x == m.c(1)), m.c(1), r);
  }

  /// C's fmod, exact: the remainder of the integer mantissas, a chunk of exponent at a time.
  F fmod(F x, F y) {
    const U mant_mask = m.cu((uint64_t{1} << kMant) - 1), implicit = m.cu(uint64_t{1} << kMant);
    U ax = m.u_from_i(m.bits(m.abs(x))), ay = m.u_from_i(m.bits(m.abs(y)));
    U ex = m.shr(ax, m.cu(kMant)), ey = m.shr(ay, m.cu(kMant));
    U mx = (ax & mant_mask) | m.sel(m.eq(ex, m.cu(0)), m.cu(0), implicit);
    U my = (ay & mant_mask) | m.sel(m.eq(ey, m.cu(0)), m.cu(0), implicit);
    ex = m.sel(m.eq(ex, m.cu(0)), m.cu(1), ex);  // subnormals: exponent 1, no implicit bit
    ey = m.sel(m.eq(ey, m.cu(0)), m.cu(1), ey);
    const U inf = m.cu(uint64_t{2 * kBias + 1} << kMant);
    B ordinary = m.and_(m.and_(m.lt_u(ax, inf), m.lt_u(ay, inf)),
                        m.and_(m.not_(m.eq(ay, m.cu(0))), m.not_(m.lt_u(ax, ay))));
    // Only ordinary operands run the loop: others start with n = 0.
    U n = m.sel(ordinary, ex - ey, m.cu(0));
    my = m.sel(m.eq(my, m.cu(0)), m.cu(1), my);
    constexpr uint64_t kChunk = 63 - kMant - 1;
    auto done = m.loop(
        std::array<U, 2>{mx, n},
        [&](const std::array<U, 2>& s) { return m.not_(m.eq(s[1], m.cu(0))); },
        [&](const std::array<U, 2>& s) -> std::array<U, 2> {
          U step = m.min_u(s[1], m.cu(kChunk));
          return {m.urem(m.shl(s[0], step), my), s[1] - step};
        });
    U r = m.urem(done[0], my);
    // r * 2^(ey - bias - kMant), exact (the remainder is representable).
    F mag = ldexp(m.f_from_u(r), m.i_from_u(ey) - m.ci(kBias + kMant));
    F out = m.copysign(mag, x);
    out = m.sel(ordinary, out, x);  // |x| < |y|, or y infinite: x
    B invalid = m.or_(m.or_(m.isnan(x), m.isnan(y)), m.or_(m.abs(x) == m.c(INFINITY), y == m.c(0)));
    return m.sel(invalid, m.c(NAN), out);
  }

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

  template <class T>
  F poly(std::span<const T> c, F x) {
    F r = m.c(c[c.size() - 1]);
    for (size_t k = c.size() - 1; k-- > 0;) r = m.fma(r, x, m.c(c[k]));
    return r;
  }

  /// erfc(a) e^(a^2) for a >= 1 (erf's tail form G_i(a - mid_i), the interval i chosen by
  /// selecting its coefficients; the last interval's polynomial beyond its end).
  F erfc_scaled(F a) {
    constexpr size_t kIntervals = Fmt::erf_end.size();
    constexpr size_t kDegree = sizeof(Fmt::erf_g[0]) / sizeof(Fmt::erf_g[0][0]);
    std::array<F, kDegree> coeffs;
    F mid = m.c(Fmt::erf_mid[kIntervals - 1]);
    for (size_t k = 0; k < kDegree; ++k) coeffs[k] = m.c(Fmt::erf_g[kIntervals - 1][k]);
    for (size_t i = kIntervals - 1; i-- > 0;) {
      B in = a < m.c(Fmt::erf_end[i]);
      mid = m.sel(in, m.c(Fmt::erf_mid[i]), mid);
      for (size_t k = 0; k < kDegree; ++k) coeffs[k] = m.sel(in, m.c(Fmt::erf_g[i][k]), coeffs[k]);
    }
    F u = a - mid;
    F g = coeffs[kDegree - 1];
    for (size_t k = kDegree - 1; k-- > 0;) g = m.fma(g, u, coeffs[k]);
    return g;
  }

  /// x log2(e) as hi + lo (hi the rounded product; the fma recovers its error exactly).
  Parts times_log2e(F x) {
    F hi = x * m.c(Fmt::log2e[0]);
    return {hi, m.fma(x, m.c(Fmt::log2e[0]), -hi) + x * m.c(Fmt::log2e[1])};
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

  /// e^a / 2 for a >= 0 up to where it overflows: 2^(a log2 e - 1) (the halving exact).
  F half_exp(F a) {
    Parts p = times_log2e(m.sel(a > m.c(Fmt::kExpHi + 1), m.c(Fmt::kExpHi + 1), a));
    return exp2_parts(p.hi - m.c(1), p.lo);
  }

  /// atan(ay / ax) in [0, pi/2] for ay, ax >= 0, not both 0 nor both infinite: the ratio t
  /// reduced to |t| <= tan(pi/8) around 0, pi/4 (t = (ay - ax) / (ay + ax)) or pi/2
  /// (t = -ax / ay), then atan(t) = t + t^3 P(t^2) with P atan's Taylor series (alternating,
  /// truncated where the next term is below a quarter ulp). Operands above 2^(emax - 2) are
  /// scaled by 1/4 first so that ay + ax cannot overflow.
  F atan_ratio(F ay, F ax) {
    const double big = std::ldexp(1.0, M::kSingle ? 125 : 1021);
    B huge = m.or_(ay > m.c(big), ax > m.c(big));
    ay = m.sel(huge, ay * m.c(0.25), ay);
    ax = m.sel(huge, ax * m.c(0.25), ax);
    B low = ay <= ax * m.c(0.41421356237309503);
    B high = ay > ax * m.c(2.414213562373095);
    F t = m.sel(low, ay, m.sel(high, -ax, ay - ax)) / m.sel(low, ax, m.sel(high, ay, ay + ax));
    const auto [qh, ql] = split(0.785398163397448309615660845819875721L);
    const auto [hh, hl] = split(1.57079632679489661923132169163975144L);
    F base_hi = m.sel(low, m.c(0), m.sel(high, m.c(hh), m.c(qh)));
    F base_lo = m.sel(low, m.c(0), m.sel(high, m.c(hl), m.c(ql)));
    constexpr int kTerms = M::kSingle ? 9 : 20;  // P's degree + 1
    F z = t * t;
    F p = m.c((kTerms % 2 ? -1.0 : 1.0) / (2 * kTerms + 1));
    for (int k = kTerms - 1; k >= 1; --k) p = m.fma(p, z, m.c((k % 2 ? -1.0 : 1.0) / (2 * k + 1)));
    return base_hi + (t + (t * z * p + base_lo));
  }

  /// log2(a) for a >= 0 finite and nonzero as hi + lo: a = 2^e (1 + f), log(1 + f) = 2 atanh(s)
  /// with s = f / (2 + f) as s_hi + s_lo (the residual f - s_hi (2 + f) by fma), the series'
  /// tail 2 s^3 (1/3 + s^2/5 + ...) (|s| < 0.1716: Taylor terms to 2^-(p + 10)), then times
  /// log2(e) as a pair, plus e. Garbage for 0, inf and NaN (pow selects those).
  Parts log2_parts(F a) {
    Reduced r = reduce_log(a);
    F f = r.f;
    F den = m.c(2) + f;
    F sh = f / den;
    // residual f - sh (2 + f) = (f - 2 sh) - sh f: 2 sh exact; fma keeps sh f exact
    F sl = m.fma(-sh, f, f - (sh + sh)) / den;
    // s^3 (2/3 + q(s^2)) with s^3 and 2/3 as pairs: that term is up to 1.3 % of the result
    F z = sh * sh;
    F ze = m.fma(sh, sh, -z);
    F th = sh * z;
    F tl = m.fma(sh, z, -th) + sh * ze;
    constexpr int kTerms = M::kSingle ? 6 : 12;
    F q = m.c(2.0 / (2 * kTerms + 1));
    for (int k = kTerms - 1; k >= 2; --k) q = m.fma(q, z, m.c(2.0 / (2 * k + 1)));
    const auto [th3, tl3] = split(0.666666666666666666666666666666666667L);
    F pl = m.c(tl3) + z * q;
    F t3h = th * m.c(th3);
    F t3l = m.fma(th, m.c(th3), -t3h) + (th * pl + tl * m.c(th3));
    F s2 = sh + sh;
    F ah = s2 + t3h;                                                 // Fast2Sum: |2s| > |t3h|
    F al = ((s2 - ah) + t3h) + (t3l + (sl + sl) + m.c(2) * z * sl);  // log(1 + f) = ah + al
    const auto [ch, cl] = split(1.44269504088896340735992468100189214L);
    F ph = ah * m.c(ch);
    F pe = m.fma(ah, m.c(ch), -ph) + (ah * m.c(cl) + al * m.c(ch));
    F ef = m.to_float(r.e);
    F w = ef + ph;
    F lo = ((ef - w) + ph) + pe;  // exact when |e| >= |ph| or e = 0 (Fast2Sum)
    F hi = w + lo;
    return {hi, lo - (hi - w)};
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

  /// 2^(hi + lo) for |hi| within the exponent range, |lo| tiny.
  F exp2_parts(F hi, F lo) {
    F n = m.rint(hi);
    F r = (hi - n) + lo;
    return ldexp(m.fma(r, poly(Fmt::exp2, r), m.c(1)), m.to_int(n));
  }

  /// e^y - 1 for y >= 0 (and NaN), accurate near 0.
  F expm1_nonneg(F y) {
    F k = m.rint(y * m.c(Fmt::log2e[0]));
    F r = m.fma(-k, m.c(Fmt::ln2[0]), y);
    r = m.fma(-k, m.c(Fmt::ln2[1]), r);
    F p = m.fma(r * r, poly(Fmt::expm1, r), r);
    F two_k = pow2(m.to_int(k));
    return m.sel(k == m.c(0), p, m.fma(p, two_k, two_k - m.c(1)));
  }

  /// x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), and the series parts of log(1 + f).
  Reduced reduce_log(F x) {
    const double scale = static_cast<double>(uint64_t{1} << (kMant + 2));
    B sub = x < m.c(M::kSingle ? 1.1754943508222875e-38 : 2.2250738585072014e-308);
    F xs = m.sel(sub, x * m.c(scale), x);
    I bits = m.bits(xs);
    I e = m.shr_s(bits, kMant) - m.ci(kBias) - m.sel(sub, m.ci(kMant + 2), m.ci(0));
    I mant = bits & m.ci((int64_t{1} << kMant) - 1);
    const int64_t sqrt2_mant = M::kSingle ? 0x3504f3 : 0x6a09e667f3bcdLL;
    B big = m.lt_s(m.ci(sqrt2_mant), mant);
    const int64_t one = int64_t{kBias} << kMant, half = int64_t{kBias - 1} << kMant;
    F mm = m.from_bits(mant | m.sel(big, m.ci(half), m.ci(one)));
    Reduced r;
    r.e = e + m.sel(big, m.ci(1), m.ci(0));
    r.f = mm - m.c(1);
    r.s = r.f / (m.c(2) + r.f);
    F z = r.s * r.s;
    r.R = z * poly(Fmt::log, z);
    r.hfsq = m.c(0.5) * r.f * r.f;
    return r;
  }

  F log_specials(F x, F y) {
    y = m.sel(x == m.c(0), m.c(-INFINITY), y);
    y = m.sel(x == m.c(INFINITY), x, y);
    return m.sel(m.or_(x < m.c(0), m.isnan(x)), m.c(NAN), y);
  }

  /// sin or cos of r + t (|r| <= ~pi/4, t a tail below r's ulp) in quadrant q (0..3).
  F trig_kernel(F r, F t, I q, bool cosine) {
    F z = r * r;
    F s = r + (r * z * poly(Fmt::sin, z) + t * (m.c(1) - m.c(0.5) * z));
    F hz = m.c(0.5) * z, w = m.c(1) - hz;
    F c = w + (((m.c(1) - w) - hz) + (z * z * poly(Fmt::cos, z) - r * t));
    if (cosine) q = q + m.ci(1);  // cos(x) = sin(x + pi/2)
    q = q & m.ci(3);
    F v = m.sel(m.eq(q & m.ci(1), m.ci(0)), s, c);
    return m.sel(m.eq(q & m.ci(2), m.ci(0)), v, -v);
  }

  F trig(F x, bool cosine) {
    F a = m.abs(x);  // NaN and inf take the fast path (and give NaN)
    B fast = m.not_(m.and_(a > m.c(Fmt::kFastTrig), a < m.c(INFINITY)));
    return m.if_else(
        fast,
        [&] {
          F k = m.rint(x * m.c(2 / 3.14159265358979323846));
          F r = m.fma(-k, m.c(Fmt::pio2[0]), x);
          r = m.fma(-k, m.c(Fmt::pio2[1]), r);
          r = m.fma(-k, m.c(Fmt::pio2[2]), r);
          return trig_kernel(r, m.c(0), m.to_int(k), cosine);
        },
        [&] { return payne_hanek(x, cosine); });
  }

  /// Bits [pos, pos + 64) of the 32-bit limbs `limbs` (least significant first), for a pos in
  /// [lo, lo + 32].
  template <size_t N>
  U window64(const std::array<U, N>& limbs, U pos, size_t lo) {
    U out = m.cu(0);
    for (size_t w = lo / 32; w <= (lo + 32) / 32; ++w) {
      U bit = pos - m.cu(w * 32);
      U low = limbs[w] | m.shl(limbs[w + 1], m.cu(32));
      U v = m.shr(low, bit) | m.shl(limbs[w + 2], m.cu(64) - bit);
      B here = m.and_(m.not_(m.lt_u(pos, m.cu(w * 32))), m.lt_u(pos, m.cu(w * 32 + 32)));
      out = m.sel(here, v, out);
    }
    return out;
  }

  /// |x| (large, finite) times 2/pi modulo 4, as a fixed-point window with 2 integer bits:
  /// hi's bit 63 weighs 2^1; for f64 the window continues into lo (down to 2^-126). |x| =
  /// mant 2^E meets 2/pi's words j0 .. j0 + W - 1, where E - 32 j0 is in [2, 34): the earlier
  /// words only add multiples of 4 (Payne-Hanek).
  std::array<U, 2> two_over_pi_window(F x) {
    constexpr int kWords = Fmt::kWords, kMantLimbs = M::kSingle ? 1 : 2;
    constexpr int kWF = Fmt::kWindowFraction;
    U bits = m.u_from_i(m.bits(m.abs(x)));
    U mant = (bits & m.cu((uint64_t{1} << kMant) - 1)) | m.cu(uint64_t{1} << kMant);
    U be = m.shr(bits, m.cu(kMant));                         // E = be - kBias - kMant
    U j0p2 = m.shr(be + m.cu(62 - kBias - kMant), m.cu(5));  // table index of word j0
    std::array<U, kMantLimbs> ml;
    ml[0] = mant & m.cu(0xffffffffu);
    if constexpr (kMantLimbs == 2) ml[1] = m.shr(mant, m.cu(32));
    std::array<U, kWords + kMantLimbs + 1> acc;  // mant * words, in 32-bit limbs
    for (U& a : acc) a = m.cu(0);
    for (int k = 0; k < kWords; ++k) {
      U w = m.table(j0p2 + m.cu(kWords - 1 - k));  // least significant word first
      for (int a = 0; a < kMantLimbs; ++a) {
        U p = ml[a] * w;
        acc[k + a] = acc[k + a] + (p & m.cu(0xffffffffu));
        acc[k + a + 1] = acc[k + a + 1] + m.shr(p, m.cu(32));
      }
    }
    for (size_t i = 0; i + 1 < acc.size(); ++i) {
      acc[i + 1] = acc[i + 1] + m.shr(acc[i], m.cu(32));
      acc[i] = acc[i] & m.cu(0xffffffffu);
    }
    // Bit i of acc weighs 2^(E - 32 (j0 + W) + i); the window's lowest bit weighs 2^-kWF, so it
    // starts at s = 32 (j0 + W) - E - kWF, in (32 W - kWF - 34, 32 W - kWF - 2].
    U s = m.cu(32) * j0p2 + m.cu(32 * kWords - kWF - 64 + kBias + kMant) - be;
    constexpr size_t kLo = 32 * kWords - kWF - 33;
    if constexpr (M::kSingle) {
      return {window64(acc, s, kLo), m.cu(0)};
    } else {
      return {window64(acc, s + m.cu(64), kLo + 64), window64(acc, s, kLo)};
    }
  }

  /// sin or cos of a large finite x: the reduction above, the nearest quadrant, and the signed
  /// fraction times pi/2 as a pair r + t.
  F payne_hanek(F x, bool cosine) {
    auto [hi, lo] = two_over_pi_window(x);
    U q = m.shr(hi + m.cu(uint64_t{1} << 61), m.cu(62));  // nearest quadrant, mod 4
    hi = hi - m.shl(q, m.cu(62));                         // signed fraction in [-1/2, 1/2)
    B negative = m.not_(m.eq(m.shr(hi, m.cu(63)), m.cu(0)));
    U nhi = m.cu(0) - hi - m.sel(m.eq(lo, m.cu(0)), m.cu(0), m.cu(1));
    lo = m.sel(negative, m.cu(0) - lo, lo);
    hi = m.sel(negative, nhi, hi);
    // |fraction| = (hi:lo) 2^-126 = (nh:nl) 2^(-126 - lz), nh's top bit set; split into two
    // pieces of the format's precision: r + t exactly.
    U lz = m.sel(m.eq(hi, m.cu(0)), m.cu(64) + m.clz(lo), m.clz(hi));
    U nh = m.shl(hi, lz) | m.shr(lo, m.cu(64) - lz) | m.shl(lo, lz - m.cu(64));
    U nl = m.shl(lo, lz);
    constexpr int kP = kMant + 1;
    U top = m.shr(nh, m.cu(64 - kP));
    U next = m.shr(m.shl(nh, m.cu(kP)) | m.shr(nl, m.cu(64 - kP)), m.cu(64 - kP));
    I lzi = m.i_from_u(lz);
    F r = ldexp(m.f_from_u(top), m.ci(2 - kP) - lzi);
    F t = ldexp(m.f_from_u(next), m.ci(2 - 2 * kP) - lzi);
    // (r + t) pi/2 as a pair
    F ph = m.c(Fmt::pio2[0]), pl = m.c(Fmt::pio2[1]);
    F p = r * ph;
    F pe = m.fma(r, ph, -p) + (r * pl + t * ph);
    F rr = p + pe;
    F tt = pe - (rr - p);
    B flip = m.or_(m.and_(negative, m.not_(m.lt_s(m.bits(x), m.ci(0)))),
                   m.and_(m.not_(negative), m.lt_s(m.bits(x), m.ci(0))));
    rr = m.sel(flip, -rr, rr);
    tt = m.sel(flip, -tt, tt);
    I qi = m.i_from_u(q);
    qi = m.sel(m.lt_s(m.bits(x), m.ci(0)), m.ci(0) - qi, qi);
    return trig_kernel(rr, tt, qi, cosine);
  }
};

}  // namespace tessera::math
