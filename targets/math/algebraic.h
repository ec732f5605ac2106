/// \file The algebraic and exact functions of the math library (algorithms.h): cbrt, hypot and
/// fmod.
#pragma once

#include "targets/math/algorithms.h"

namespace tessera::math {

/// The real cube root: |x| = 2^(3q + i) m (m in [1, 2), i in 0..2; subnormals scaled by an
/// exact power 2^(3n) first), a linear seed for the cube root of y = 2^i m in [1, 8), Halley's
/// iteration (two steps at f32, three at f64), and a last Newton step whose residual
/// g^3 - y is exact (products split by fma). +-0, +-inf and NaN give x.
template <class M>
auto Algorithms<M>::cbrt(F x) -> F {
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
template <class M>
auto Algorithms<M>::hypot(F x, F y) -> F {
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

/// C's fmod, exact: the remainder of the integer mantissas, a chunk of exponent at a time.
template <class M>
auto Algorithms<M>::fmod(F x, F y) -> F {
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

}  // namespace tessera::math
