/// \file The trigonometric functions of the math library (algorithms.h): sin and cos (Cody-Waite
/// reduction, Payne-Hanek for large arguments), atan, asin, acos and atan2.
#pragma once

#include "targets/math/algorithms.h"

namespace tessera::math {

template <class M>
auto Algorithms<M>::sin(F x) -> F {
  F s = trig(x, false);
  return m.sel(x == m.c(0), x, s);  // sin(-0) = -0
}

template <class M>
auto Algorithms<M>::cos(F x) -> F {
  return trig(x, true);
}

/// atan(x) = sign(x) atan(|x| / 1) (atan_ratio).
template <class M>
auto Algorithms<M>::atan(F x) -> F {
  return m.copysign(atan_ratio(m.abs(x), m.c(1)), x);
}

/// asin(x) = sign(x) atan(|x| / sqrt((1 - |x|)(1 + |x|))): NaN beyond [-1, 1], +-pi/2 at +-1.
template <class M>
auto Algorithms<M>::asin(F x) -> F {
  F a = m.abs(x);
  return m.copysign(atan_ratio(a, sqrt((m.c(1) - a) * (m.c(1) + a))), x);
}

/// acos(x) = atan(sqrt((1 - |x|)(1 + |x|)) / |x|), or pi minus it for negative x.
template <class M>
auto Algorithms<M>::acos(F x) -> F {
  F a = m.abs(x);
  F r = atan_ratio(sqrt((m.c(1) - a) * (m.c(1) + a)), a);
  const auto [ph, pl] = split(3.14159265358979323846264338327950288L);
  return m.sel(x < m.c(0), (m.c(ph) - r) + m.c(pl), r);
}

/// atan2(y, x) with C99 Annex F's special values: the angle of |y| / |x| in [0, pi/2]
/// (atan_ratio), pi minus it where x's sign bit is set, with y's sign; both zero give 0, both
/// infinite pi/4 (before the quadrant), NaN anywhere NaN.
template <class M>
auto Algorithms<M>::atan2(F y, F x) -> F {
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

/// atan(ay / ax) in [0, pi/2] for ay, ax >= 0, not both 0 nor both infinite: the ratio t
/// reduced to |t| <= tan(pi/8) around 0, pi/4 (t = (ay - ax) / (ay + ax)) or pi/2
/// (t = -ax / ay), then atan(t) = t + t^3 P(t^2) with P atan's Taylor series (alternating,
/// truncated where the next term is below a quarter ulp). Operands above 2^(emax - 2) are
/// scaled by 1/4 first so that ay + ax cannot overflow.
template <class M>
auto Algorithms<M>::atan_ratio(F ay, F ax) -> F {
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

/// sin or cos of r + t (|r| <= ~pi/4, t a tail below r's ulp) in quadrant q (0..3).
template <class M>
auto Algorithms<M>::trig_kernel(F r, F t, I q, bool cosine) -> F {
  F z = r * r;
  F s = r + (r * z * poly(Fmt::sin, z) + t * (m.c(1) - m.c(0.5) * z));
  F hz = m.c(0.5) * z, w = m.c(1) - hz;
  F c = w + (((m.c(1) - w) - hz) + (z * z * poly(Fmt::cos, z) - r * t));
  if (cosine) q = q + m.ci(1);  // cos(x) = sin(x + pi/2)
  q = q & m.ci(3);
  F v = m.sel(m.eq(q & m.ci(1), m.ci(0)), s, c);
  return m.sel(m.eq(q & m.ci(2), m.ci(0)), v, -v);
}

template <class M>
auto Algorithms<M>::trig(F x, bool cosine) -> F {
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
template <class M>
template <size_t N>
auto Algorithms<M>::window64(const std::array<U, N>& limbs, U pos, size_t lo) -> U {
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
template <class M>
auto Algorithms<M>::two_over_pi_window(F x) -> std::array<U, 2> {
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
template <class M>
auto Algorithms<M>::payne_hanek(F x, bool cosine) -> F {
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

}  // namespace tessera::math
