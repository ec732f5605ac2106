/// \file The error function of the math library (algorithms.h) and its inverse.
#pragma once

#include "targets/math/algorithms.h"

namespace tessera::math {

template <class M>
auto Algorithms<M>::erf(F x) -> F {
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
template <class M>
auto Algorithms<M>::erfinv(F x) -> F {
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

/// erfc(a) e^(a^2) for a >= 1 (erf's tail form G_i(a - mid_i), the interval i chosen by
/// selecting its coefficients; the last interval's polynomial beyond its end).
template <class M>
auto Algorithms<M>::erfc_scaled(F a) -> F {
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

}  // namespace tessera::math
