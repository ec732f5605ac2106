/// \file The exponential and logarithmic functions of the math library (algorithms.h): exp, exp2,
/// exp_hw, log, log1p, log2, log10, expm1, the hyperbolic functions and pow, with their
/// reductions.
#pragma once

#include "targets/math/algorithms.h"

namespace tessera::math {

template <class M>
auto Algorithms<M>::exp(F x) -> F {
  Parts p = times_log2e(clamp(x, Fmt::kExpLo, Fmt::kExpHi));
  return exp2_parts(p.hi, p.lo);
}

template <class M>
auto Algorithms<M>::exp2(F x) -> F {
  return exp2_parts(clamp(x, Fmt::kExp2Lo, Fmt::kExp2Hi), m.c(0));
}

/// e^x from the backend's hardware 2^x, `M::ex2` (PTX ex2.approx.f32: within 2 ulp over the
/// whole range, subnormal results included): hi = x log2(e) rounded and lo, its rounding error
/// (|lo| <= 2^-17 where the result is finite and nonzero), give e^x = 2^hi (1 + lo ln 2) up to
/// 2^-34 relative; one fma applies the correction with a single rounding: within 2.5 ulp (the
/// tile IR allows 4). Where 2^hi is infinite the fma gives NaN (inf * -t + inf), so a NaN from
/// a non-NaN 2^hi takes 2^hi. Six instructions and ex2 instead of exp's twenty-five.
template <class M>
auto Algorithms<M>::exp_hw(F x) -> F {
  Parts p = times_log2e(clamp(x, Fmt::kExpLo, Fmt::kExpHi));
  F e = m.ex2(p.hi);
  F y = m.fma(e, p.lo * m.c(0.6931471805599453), e);
  return m.sel(m.isnan(y), e, y);
}

template <class M>
auto Algorithms<M>::log(F x) -> F {
  Reduced r = reduce_log(x);
  F dk = m.to_float(r.e);
  F l1p = r.f - (r.hfsq - (r.s * (r.hfsq + r.R) + dk * m.c(Fmt::ln2[1])));
  return log_specials(x, dk * m.c(Fmt::ln2[0]) + l1p);
}

/// log(1 + x), accurate for small x: u = 1 + x rounded, c the exact rounding error of that sum
/// (Knuth's two-sum), log(u) from the reduction of `log` with c / u added to its small tail
/// (log(u + c) = log(u) + c/u + O(c^2)). Tiny x gives x, -0 gives -0, -1 gives -inf.
template <class M>
auto Algorithms<M>::log1p(F x) -> F {
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

template <class M>
auto Algorithms<M>::log2(F x) -> F {
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

/// e^x - 1, accurate near 0: x = k ln2 + r (|r| <= ln2/2, k = 0 for small x),
/// e^x - 1 = 2^k (expm1(r) + 1) - 1, applied as 2 (2^(k-1) expm1(r) + (2^(k-1) - 1/2)) so that
/// 2^k may reach the format's overflow threshold (as 2 (2^(k-1) (p + 1)) where 2^k - 1 rounds
/// to 2^k). Below -(mantissa + 3) ln 2 the result rounds
/// to -1; -0 gives -0; tiny x gives x.
template <class M>
auto Algorithms<M>::expm1(F x) -> F {
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
template <class M>
auto Algorithms<M>::log10(F x) -> F {
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

template <class M>
auto Algorithms<M>::tanh(F x) -> F {
  F a = m.abs(x);
  a = m.sel(a > m.c(Fmt::kTanhClamp), m.c(Fmt::kTanhClamp), a);  // tanh(a) rounds to 1 there
  F q = expm1_nonneg(a + a);
  return m.copysign(q / (q + m.c(2)), x);
}

/// sinh(x) = sign(x) (t + t / (t + 1)) / 2 with t = expm1(|x|) (below 1 in the form
/// 2t - t^2 / (t + 1), which does not cancel); above kTanhClamp, where e^-|x| no longer counts,
/// e^|x| / 2 (2^(|x| log2 e - 1), so that it overflows only where sinh does).
template <class M>
auto Algorithms<M>::sinh(F x) -> F {
  F a = m.abs(x);
  F t = expm1(m.sel(a > m.c(Fmt::kTanhClamp), m.c(0), a));
  F small = m.c(0.5) * m.sel(a < m.c(1), (t + t) - t * t / (t + m.c(1)), t + t / (t + m.c(1)));
  return m.copysign(m.sel(a > m.c(Fmt::kTanhClamp), half_exp(a), small), x);
}

/// cosh(x) = 1 + t^2 / (2 (t + 1)) with t = expm1(|x|) below 1, (e + 1/e) / 2 with
/// e = t + 1 below kTanhClamp, e^|x| / 2 above (as sinh).
template <class M>
auto Algorithms<M>::cosh(F x) -> F {
  F a = m.abs(x);
  F t = expm1(m.sel(a > m.c(Fmt::kTanhClamp), m.c(0), a));
  F w = t + m.c(1);
  F small = m.sel(a < m.c(1), m.c(1) + t * t / (w + w), m.c(0.5) * w + m.c(0.5) / w);
  return m.sel(a > m.c(Fmt::kTanhClamp), half_exp(a), small);
}

/// x^y with C99 Annex F's special values: |x|^y = 2^(y log2|x|), log2|x| as a pair good to
/// about 2^-(p + 8) relative (log's reduction with s = f / (2 + f) split exactly and the atanh
/// series 2 (s + s^3/3 + ...) summed apart from its leading term), the product with y as a pair,
/// and 2^(hi + lo) by exp2's reduction. A negative x gives NaN unless y is an integer, and the
/// result's sign is x's for odd integers y.
template <class M>
auto Algorithms<M>::pow(F x, F y) -> F {
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
            m.sel(m.and_(ax < m.c(1), y_neg), inf, m.sel(m.or_(ax < m.c(1), y_neg), zero, inf)), r);
  r = m.sel(m.and_(y_inf, ax == m.c(1)), m.c(1), r);
  B x_neg = m.lt_s(m.bits(x), m.ci(0));
  r = m.sel(m.and_(x_neg, y_odd), -r, r);
  B bad = m.and_(m.and_(x < m.c(0), ax < inf), m.not_(y_int));  // includes y NaN
  r = m.sel(m.or_(bad, m.or_(m.isnan(x), m.isnan(y))), x + y + m.c(NAN), r);
  return m.sel(m.or_(y == m.c(0), x == m.c(1)), m.c(1), r);
}

/// x log2(e) as hi + lo (hi the rounded product; the fma recovers its error exactly).
template <class M>
auto Algorithms<M>::times_log2e(F x) -> Parts {
  F hi = x * m.c(Fmt::log2e[0]);
  return {hi, m.fma(x, m.c(Fmt::log2e[0]), -hi) + x * m.c(Fmt::log2e[1])};
}

/// e^a / 2 for a >= 0 up to where it overflows: 2^(a log2 e - 1) (the halving exact).
template <class M>
auto Algorithms<M>::half_exp(F a) -> F {
  Parts p = times_log2e(m.sel(a > m.c(Fmt::kExpHi + 1), m.c(Fmt::kExpHi + 1), a));
  return exp2_parts(p.hi - m.c(1), p.lo);
}

/// log2(a) for a >= 0 finite and nonzero as hi + lo: a = 2^e (1 + f), log(1 + f) = 2 atanh(s)
/// with s = f / (2 + f) as s_hi + s_lo (the residual f - s_hi (2 + f) by fma), the series'
/// tail 2 s^3 (1/3 + s^2/5 + ...) (|s| < 0.1716: Taylor terms to 2^-(p + 10)), then times
/// log2(e) as a pair, plus e. Garbage for 0, inf and NaN (pow selects those).
template <class M>
auto Algorithms<M>::log2_parts(F a) -> Parts {
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

/// 2^(hi + lo) for |hi| within the exponent range, |lo| tiny.
template <class M>
auto Algorithms<M>::exp2_parts(F hi, F lo) -> F {
  F n = m.rint(hi);
  F r = (hi - n) + lo;
  return ldexp(m.fma(r, poly(Fmt::exp2, r), m.c(1)), m.to_int(n));
}

/// e^y - 1 for y >= 0 (and NaN), accurate near 0.
template <class M>
auto Algorithms<M>::expm1_nonneg(F y) -> F {
  F k = m.rint(y * m.c(Fmt::log2e[0]));
  F r = m.fma(-k, m.c(Fmt::ln2[0]), y);
  r = m.fma(-k, m.c(Fmt::ln2[1]), r);
  F p = m.fma(r * r, poly(Fmt::expm1, r), r);
  F two_k = pow2(m.to_int(k));
  return m.sel(k == m.c(0), p, m.fma(p, two_k, two_k - m.c(1)));
}

/// x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)), and the series parts of log(1 + f).
template <class M>
auto Algorithms<M>::reduce_log(F x) -> Reduced {
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

template <class M>
auto Algorithms<M>::log_specials(F x, F y) -> F {
  y = m.sel(x == m.c(0), m.c(-INFINITY), y);
  y = m.sel(x == m.c(INFINITY), x, y);
  return m.sel(m.or_(x < m.c(0), m.isnan(x)), m.c(NAN), y);
}

}  // namespace tessera::math
