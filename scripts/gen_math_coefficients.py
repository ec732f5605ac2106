#!/usr/bin/env python3
# \file Generates core/support/math_coefficients.h: the polynomial coefficients (near-minimax,
# Chebyshev fits by mpmath at 60 digits) and constants of the PTX target's math functions, so
# that their derivation is reproducible. Usage: scripts/gen_math_coefficients.py > file
import struct
import mpmath as mp

mp.mp.dps = 60
PI = mp.pi
LN2 = mp.log(2)


def f32(x):
    return struct.unpack('<f', struct.pack('<f', float(x)))[0]


def lit(x, single):
    if single:
        return repr(f32(x)) + 'f' if 'e' in repr(f32(x)) or '.' in repr(f32(x)) else repr(f32(x)) + '.0f'
    return repr(float(x))


def chop(x, bits):
    """x truncated to `bits` significant bits (so products with small integers stay exact)."""
    m, e = mp.frexp(x)
    return mp.ldexp(mp.floor(mp.ldexp(m, bits)), e - bits)


def fit(f, a, b, deg, single, absolute=False):
    """Chebyshev fit; the error (relative, or absolute) is sampled with the coefficients rounded
    to the format."""
    p, _ = mp.chebyfit(f, [a, b], deg + 1, error=True)
    rnd = f32 if single else float
    c = [mp.mpf(rnd(x)) for x in reversed(p)]  # ascending
    poly = lambda x: mp.polyval(list(reversed(c)), x)
    err = max(abs(poly(x) - f(x)) / (1 if absolute else abs(f(x)))
              for x in mp.linspace(a, b, 401) if absolute or f(x) != 0)
    return c, err


def emit_array(name, coeffs, single, note):
    ty = 'float' if single else 'double'
    body = ', '.join(lit(c, single) for c in coeffs)
    print(f'/// {note}')
    print(f'inline constexpr {ty} {name}[] = {{{body}}};')


def series(single):
    s = 'F32' if single else 'F64'
    deg = {  # polynomial degree per function and precision
        'exp2': (6, 11), 'expm1': (6, 12), 'sin': (4, 7), 'cos': (4, 7), 'log': (4, 10),
        'erf_small': (6, 11), 'erfc': (11, 17)}
    d = {k: v[0] if single else v[1] for k, v in deg.items()}
    notes = []
    # 2^r = 1 + r * E(r), |r| <= 0.51
    E = lambda r: (mp.power(2, r) - 1) / r if r != 0 else LN2
    c, err = fit(E, -0.51, 0.51, d['exp2'], single)
    emit_array(f'kExp2{s}', c, single, f'(2^r - 1) / r on [-0.51, 0.51]; relative error {mp.nstr(err, 3)}')
    # expm1(r) = r + r^2 * M(r), |r| <= 0.35
    M = lambda r: (mp.expm1(r) - r) / (r * r) if r != 0 else mp.mpf(1) / 2
    c, err = fit(M, -0.35, 0.35, d['expm1'], single)
    emit_array(f'kExpm1{s}', c, single, f'(e^r - 1 - r) / r^2 on [-0.35, 0.35]; relative error {mp.nstr(err, 3)}')
    z1 = (PI / 4 * mp.mpf('1.01')) ** 2
    S = lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / (z * mp.sqrt(z)) if z != 0 else -mp.mpf(1) / 6
    c, err = fit(S, 0, z1, d['sin'], single)
    emit_array(f'kSin{s}', c, single, f'sin(r) = r + r^3 S(r^2), |r| <= 1.01 pi/4; relative error {mp.nstr(err, 3)}')
    C = lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / (z * z) if z != 0 else mp.mpf(1) / 24
    c, err = fit(C, 0, z1, d['cos'], single)
    emit_array(f'kCos{s}', c, single, f'cos(r) = 1 - r^2/2 + r^4 C(r^2); relative error {mp.nstr(err, 3)}')
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
    L = lambda z: (2 * mp.atanh(mp.sqrt(z)) - 2 * mp.sqrt(z)) / (z * mp.sqrt(z)) if z != 0 else mp.mpf(2) / 3
    c, err = fit(L, 0, smax * smax * mp.mpf('1.01'), d['log'], single)
    emit_array(f'kLog{s}', c, single, f'log(1+f) = 2s + s z L(z), s = f/(2+f), z = s^2; relative error {mp.nstr(err, 3)}')
    Ez = lambda z: (mp.erf(mp.sqrt(z)) / mp.sqrt(z) if z != 0 else 2 / mp.sqrt(PI)) - 1
    c, err = fit(Ez, 0, 1, d['erf_small'], single, absolute=True)
    emit_array(f'kErfSmall{s}', c, single,
               f'erf(x) = x + x Q(x^2) for |x| < 1; absolute error of Q {mp.nstr(err, 3)}')
    # erf(x) = 1 - e^{-x^2} g(x) for 1 <= x < end, g fitted per interval in u = x - center.
    g = lambda x: mp.erfc(x) * mp.exp(x * x)
    intervals = [(1, 4)] if single else [(1, 2), (2, 3.25), (3.25, 6)]
    rows = []
    for a, b in intervals:
        mid = mp.mpf(a + b) / 2
        c, err = fit(lambda u: g(mid + u), mp.mpf(a) - mid, mp.mpf(b) - mid, d['erfc'], single)
        worst = err * g(a) * mp.exp(-mp.mpf(a) ** 2)  # absolute error it causes in erf
        rows.append((mid, c, worst))
    print(f'/// erf(x) = 1 - e^(-x^2) G_i(x - kErfMid{s}[i]) on interval i (ends kErfEnd{s}); '
          'erf errors ' + ', '.join(mp.nstr(w, 3) for _, _, w in rows))
    ends = ', '.join(lit(b, single) for _, b in intervals)
    mids = ', '.join(lit(m, single) for m, _, _ in rows)
    ty = 'float' if single else 'double'
    print(f'inline constexpr {ty} kErfEnd{s}[] = {{{ends}}};')
    print(f'inline constexpr {ty} kErfMid{s}[] = {{{mids}}};')
    print(f'inline constexpr {ty} kErfG{s}[][{d["erfc"] + 1}] = {{')
    for _, c, _ in rows:
        print('    {' + ', '.join(lit(x, single) for x in c) + '},')
    print('};')
    print()


def splits():
    """Constants split into parts for Cody-Waite reductions."""
    print('/// pi/2 = kPio2*[0] + [1] + [2] (each rounded to the format: fma-based reduction).')
    for single, s in ((True, 'F32'), (False, 'F64')):
        rnd = f32 if single else float
        p1 = rnd(PI / 2); p2 = rnd(PI / 2 - p1); p3 = rnd(PI / 2 - p1 - p2)
        ty = 'float' if single else 'double'
        print(f'inline constexpr {ty} kPio2{s}[] = {{{lit(p1, single)}, {lit(p2, single)}, {lit(p3, single)}}};')
    print('/// ln2 = kLn2*[0] + [1], [0] with trailing zeros so that k * [0] is exact for |k| < 2^11.')
    for single, s, bits in ((True, 'F32', 12), (False, 'F64', 42)):
        hi = chop(LN2, bits); lo = LN2 - hi
        ty = 'float' if single else 'double'
        print(f'inline constexpr {ty} kLn2{s}[] = {{{lit(hi, single)}, {lit(lo, single)}}};')
    print('/// log2(e) = kLog2e*[0] + [1]; [0] with trailing zeros (log2 of a split hi part).')
    for single, s, bits in ((True, 'F32', 12), (False, 'F64', 27)):
        l2e = 1 / LN2
        hi = chop(l2e, bits); lo = l2e - hi
        ty = 'float' if single else 'double'
        print(f'inline constexpr {ty} kLog2eSplit{s}[] = {{{lit(hi, single)}, {lit(lo, single)}}};')
    print('/// log2(e) rounded, and the rest.')
    for single, s in ((True, 'F32'), (False, 'F64')):
        rnd = f32 if single else float
        hi = rnd(1 / LN2); lo = rnd(1 / LN2 - hi)
        ty = 'float' if single else 'double'
        print(f'inline constexpr {ty} kLog2e{s}[] = {{{lit(hi, single)}, {lit(lo, single)}}};')
    print('/// pi/2 as a double-double (Payne-Hanek: the reduced fraction times pi/2).')
    hi = float(PI / 2); lo = float(PI / 2 - hi)
    print(f'inline constexpr double kPio2DD[] = {{{hi!r}, {lo!r}}};')
    # 2/pi bits, 32 per word, after two zero words (so word index j0 + 2 is never negative).
    words = 40
    mp.mp.dps = 500
    v = mp.floor(2 / PI * mp.mpf(2) ** (32 * words))
    w = []
    for i in range(words):
        w.append(int(v) >> (32 * (words - 1 - i)) & 0xffffffff)
    print('/// Bits of 2/pi, 32 per word, most significant first, after two zero words.')
    print('inline constexpr uint32_t kTwoOverPiWords[] = {0, 0,')
    for i in range(0, words, 6):
        print('    ' + ', '.join(f'0x{x:08x}u' for x in w[i:i + 6]) + ',')
    print('};')


print('/// \\file Generated by scripts/gen_math_coefficients.py (do not edit): polynomial coefficients')
print('/// (ascending powers) and constants of the math functions both targets compute alike.')
print('#pragma once')
print()
print('#include <cstdint>')
print()
print('namespace tessera::math {')
print()
series(True)
series(False)
splits()
print()
print('}  // namespace tessera::math')
