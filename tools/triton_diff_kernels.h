/// \file The op-family kernels of `tessera triton-diff` (tools/triton_diff.cpp), one per family of
/// the conformance catalogue; bench/peers/twins.py holds the Triton twin of each, line for line.
#pragma once

#include <cmath>
#include <cstdint>

#include "runtime/tessera.h"  // the kernel language, as users include it

namespace tessera::tools::triton_diff {

namespace tl = tessera::tl;

/// Elementwise binary with Triton's NaN default: maximum(x, 0) and minimum(x, y).
inline void minmax_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> relu,
                          tl::ptr<float> lo, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m), b = tl::load(y + offs, m);
  tl::store(relu + offs, tl::maximum(a, 0.0f), m);
  tl::store(lo + offs, tl::minimum(a, b), m);
}

/// Unary math: exp, and compare/where: where(x > y, x, 2 * y).
inline void unary_where_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> e,
                               tl::ptr<float> w, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m), b = tl::load(y + offs, m);
  tl::store(e + offs, tl::exp(a), m);
  tl::store(w + offs, tl::where(a > b, a, 2.0f * b), m);
}

/// Integer division as Triton spells it: `a // b` (here `/`) and `a / b` (here tl::truediv).
inline void division_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> y, tl::ptr<int32_t> q,
                            tl::ptr<float> r, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m), b = tl::load(y + offs, m);
  tl::store(q + offs, a / b, m);
  tl::store(r + offs, tl::truediv(a, b), m);
}

/// Casts: f32 -> f16 (to nearest even) and f32 -> i32 (toward zero).
inline void cast_kernel(tl::ptr<float> x, tl::ptr<tessera::half> h, tl::ptr<int32_t> i, tl::i32 n,
                        int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  tl::store(h + offs, a.to(tl::float16), m);
  tl::store(i + offs, a.to(tl::int32), m);
}

/// Reductions of one row per program: max with NaN elements (ignored, as Triton's), and the sum
/// of an f16 row (Tessera: f32 accumulator and result; Triton 3.6: f16).
inline void reduce_kernel(tl::ptr<float> x, tl::ptr<tessera::half> h, tl::ptr<float> mx,
                          tl::ptr<float> s, tl::i32 n, int BLOCK) {
  auto row = tl::program_id(0);
  auto cols = tl::arange(0, BLOCK);
  auto m = cols < n;
  tl::store(mx + row, tl::max(tl::load(x + row * n + cols, m, -INFINITY), 0));
  tl::store(s + row, tl::sum(tl::load(h + row * n + cols, m, 0.0f), 0));
}

/// Scan: the inclusive cumsum of each row.
inline void cumsum_kernel(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto row = tl::program_id(0);
  auto cols = tl::arange(0, BLOCK);
  auto m = cols < n;
  tl::store(out + row * n + cols, tl::cumsum(tl::load(x + row * n + cols, m, 0.0f), 0), m);
}

/// Dot: one M x K by K x N product of row-major tiles (f32 inputs use TF32, as Triton's default).
inline void dot_kernel(tl::pointer a, tl::pointer b, tl::ptr<float> c, int M, int N, int K) {
  auto rm = tl::arange(0, M), rn = tl::arange(0, N), rk = tl::arange(0, K);
  auto at = tl::load(a + rm[{tl::_, tl::None}] * K + rk[{tl::None, tl::_}]);
  auto bt = tl::load(b + rk[{tl::_, tl::None}] * N + rn[{tl::None, tl::_}]);
  tl::store(c + rm[{tl::_, tl::None}] * N + rn[{tl::None, tl::_}], tl::dot(at, bt));
}

/// Atomics: a histogram of x into 64 bins with atomic_add (integers: the result has no order).
inline void histogram_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> bins, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::atomic_add(bins + (tl::load(x + offs, m, 0) & 63), 1, m);
}

/// Random numbers (Philox 4x32-10, Triton's numbers for a seed and offsets): randint, rand and
/// randn at offsets 0 .. n-1.
inline void random_kernel(tl::ptr<int32_t> ri, tl::ptr<float> ru, tl::ptr<float> rn, tl::i32 seed,
                          tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  tl::store(ri + offs, tl::randint(seed, offs), m);
  tl::store(ru + offs, tl::rand(seed, offs), m);
  tl::store(rn + offs, tl::randn(seed, offs), m);
}

}  // namespace tessera::tools::triton_diff
