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

// --- the ops of the Triton-language wave (H15): libdevice, sort, histogram, gather, block ptrs --

/// The libdevice functions of one operand, in kLibdeviceUnary's order (FN picks one at trace time,
/// as a tl.constexpr `if` does in the twin).
inline constexpr const char* kLibdeviceUnary[] = {"erfinv", "expm1", "log10", "sinh", "cosh",
                                                  "asin",   "acos",  "atan",  "cbrt"};
/// The libdevice functions of two operands, in order.
inline constexpr const char* kLibdeviceBinary[] = {"pow", "atan2", "hypot"};

/// y = f(x) for the unary libdevice function number FN.
inline void libdevice_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 n, int FN, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m);
  tl::tensor r = FN == 0   ? tl::erfinv(a)
                 : FN == 1 ? tl::expm1(a)
                 : FN == 2 ? tl::log10(a)
                 : FN == 3 ? tl::sinh(a)
                 : FN == 4 ? tl::cosh(a)
                 : FN == 5 ? tl::asin(a)
                 : FN == 6 ? tl::acos(a)
                 : FN == 7 ? tl::atan(a)
                           : tl::cbrt(a);
  tl::store(y + offs, r, m);
}

/// y = f(a, b) for the binary libdevice function number FN (pow, atan2, hypot).
inline void libdevice2_kernel(tl::ptr<float> x, tl::ptr<float> z, tl::ptr<float> y, tl::i32 n,
                              int FN, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto m = offs < n;
  auto a = tl::load(x + offs, m), b = tl::load(z + offs, m);
  tl::store(y + offs, FN == 0 ? tl::pow(a, b) : FN == 1 ? tl::atan2(a, b) : tl::hypot(a, b), m);
}

/// Sort: each row of BLOCK floats ascending, and descending.
inline void sort_kernel(tl::ptr<float> x, tl::ptr<float> up, tl::ptr<float> down, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto a = tl::load(x + offs);
  tl::store(up + offs, tl::sort(a));
  tl::store(down + offs, tl::sort(a, 0, true));
}

/// tl.histogram: the histogram of each row of BLOCK integers over BINS bins.
inline void histogram_op_kernel(tl::ptr<int32_t> x, tl::ptr<int32_t> bins, int BLOCK, int BINS) {
  auto row = tl::program_id(0);
  auto a = tl::load(x + row * BLOCK + tl::arange(0, BLOCK));
  tl::store(bins + row * BINS + tl::arange(0, BINS), tl::histogram(a, BINS));
}

/// tl.gather along axis 1 of an R x C tile: out[i][j] = src[i][idx[i][j]].
inline void gather_kernel(tl::ptr<float> src, tl::ptr<int32_t> idx, tl::ptr<float> out, int R,
                          int C) {
  auto rows = tl::arange(0, R)[{tl::_, tl::None}] * C, cols = tl::arange(0, C)[{tl::None, tl::_}];
  auto s = tl::load(src + rows + cols);
  auto i = tl::load(idx + rows + cols);
  tl::store(out + rows + cols, tl::gather(s, i, 1));
}

/// Block pointers: an M x N matrix (not a tile multiple) copied BM x BN block by block, each block
/// read at its place plus one advance of (0, BN) back, with boundary checks and zero padding.
inline void block_ptr_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::i32 M, tl::i32 N, int BM,
                             int BN) {
  auto pm = tl::program_id(0), pn = tl::program_id(1);
  auto src = tl::make_block_ptr(x, {M, N}, {N, 1}, {pm * BM, pn * BN - BN}, {BM, BN}, {1, 0});
  src = tl::advance(src, {0, BN});
  auto dst = tl::make_block_ptr(y, {M, N}, {N, 1}, {pm * BM, pn * BN}, {BM, BN}, {1, 0});
  tl::store(dst, tl::load(src, {0, 1}), {0, 1});
}

}  // namespace tessera::tools::triton_diff
