/// \file Block pointers (tl::make_block_ptr, tl::advance, and tl::load / tl::store of a block
/// pointer with boundary checks): a copy of a 37x45 matrix (row stride 50) in 16x32 blocks
/// whose offsets start below and past the tensor and are moved back by tl::advance, padded
/// with zeros or NaN, on every numeric dtype; and a matmul whose operands walk K by
/// tl::advance inside tl::range, against the same matmul written with pointer tiles (the
/// results equal bit for bit, and the exact integer-valued reference).
#include <cmath>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

constexpr int kShift = 5;  // the copy's blocks start kShift rows above the block grid

/// Block (pid 0, pid 1) of `a` [M, N] (row stride lda), shifted kShift rows up, read with both
/// dimensions checked (padding zero, or NaN when PAD_NAN) into `padded` (the whole block, plain
/// pointers) and written to `out` [M, N] (row stride N) with both dimensions checked.
void bp_copy_kernel(tl::pointer a, tl::pointer out, tl::pointer padded, tl::i32 M, tl::i32 N,
                    tl::i32 lda, int BM, int BN, bool PAD_NAN) {
  auto pm = tl::program_id(0), pn = tl::program_id(1);
  auto src = tl::make_block_ptr(a, {M, N}, {lda, 1}, {pm * BM - kShift - 7, pn * BN + 3}, {BM, BN},
                                {1, 0});
  src = tl::advance(src, {7, -3});
  auto x = tl::load(src, {0, 1}, PAD_NAN ? tl::PaddingOption::Nan : tl::PaddingOption::Zero);
  auto rows = pm * BM + tl::arange(0, BM)[{tl::_, tl::None}];
  auto cols = pn * BN + tl::arange(0, BN)[{tl::None, tl::_}];
  tl::store(padded + rows * (tl::num_programs(1) * BN) + cols, x);
  auto dst = tl::make_block_ptr(out, {M, N}, {N, 1}, {pm * BM - kShift, pn * BN}, {BM, BN}, {1, 0});
  tl::store(dst, x, {0, 1});
}

void copy_case(Context& ctx, DType t, bool nan) {
  auto k = TESSERA_KERNEL(bp_copy_kernel, a, out, padded, M, N, lda, BM, BN, PAD_NAN);
  const int m = 37, n = 45, lda = 50, bm = 16, bn = 32;
  const int gm = static_cast<int>(cdiv(m, bm)), gn = static_cast<int>(cdiv(n, bn));
  HostArray a = ctx.random_full(t, size_t(m) * lda);
  DevArray da = ctx.upload(a), o = ctx.poisoned(t, size_t(m) * n);
  DevArray p = ctx.poisoned(t, size_t(gm) * bm * gn * bn);
  k[{Grid(gm, gn)}](da.buf, o.buf, p.buf, m, n, lda, bm, bn, nan);
  HostArray want(t, size_t(m) * n), want_p(t, size_t(gm) * bm * gn * bn);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < n; ++c) want.set_bits(size_t(r) * n + c, a.bits(size_t(r) * lda + c));
  for (int r = 0; r < gm * bm; ++r) {
    for (int c = 0; c < gn * bn; ++c) {
      const int sr = r - kShift;  // the element the block read there
      const size_t at = size_t(r) * gn * bn + c;
      if (sr >= 0 && sr < m && c < n)
        want_p.set_bits(at, a.bits(size_t(sr) * lda + c));
      else if (nan)
        want_p.set_f(at, std::nan(""));
      else
        want_p.set_bits(at, 0);
    }
  }
  ctx.check_exact("block copy " + dname(t), ctx.download(o), want);
  ctx.check_exact("padded blocks " + dname(t) + (nan ? " nan" : " zero"), ctx.download(p), want_p);
}

/// c [M, N] = a [M, K] x b [K, N] (row strides lda, ldb, ldc) in f32 (IEEE products), one
/// BMxBN block per program: through block pointers advanced along K when BLOCKPTR, else
/// through masked pointer tiles.
void bp_matmul_kernel(tl::pointer a, tl::pointer b, tl::ptr<float> c, tl::i32 M, tl::i32 N,
                      tl::i32 K, tl::i32 lda, tl::i32 ldb, tl::i32 ldc, int BM, int BN, int BK,
                      bool BLOCKPTR) {
  auto pm = tl::program_id(0), pn = tl::program_id(1);
  auto acc = tl::zeros<float>({BM, BN});
  const auto ieee = tl::InputPrecision::Ieee;
  if (BLOCKPTR) {
    auto ap = tl::make_block_ptr(a, {M, K}, {lda, 1}, {pm * BM, 0}, {BM, BK}, {1, 0});
    auto bp = tl::make_block_ptr(b, {K, N}, {ldb, 1}, {0, pn * BN}, {BK, BN}, {1, 0});
    for ([[maybe_unused]] auto k : tl::range(0, K, BK)) {
      acc = tl::dot(tl::load(ap, {0, 1}), tl::load(bp, {0, 1}), acc, ieee);
      ap = tl::advance(ap, {0, BK});
      bp = tl::advance(bp, {BK, 0});
    }
    tl::store(tl::make_block_ptr(c, {M, N}, {ldc, 1}, {pm * BM, pn * BN}, {BM, BN}, {1, 0}), acc,
              {0, 1});
    return;
  }
  auto rm = pm * BM + tl::arange(0, BM)[{tl::_, tl::None}];  // (BM, 1)
  auto rn = pn * BN + tl::arange(0, BN)[{tl::None, tl::_}];  // (1, BN)
  auto rk = tl::arange(0, BK);
  for (auto k : tl::range(0, K, BK)) {
    auto ka = k + rk[{tl::None, tl::_}];  // (1, BK)
    auto kb = k + rk[{tl::_, tl::None}];  // (BK, 1)
    auto x = tl::load(a + rm * lda + ka, (rm < M) & (ka < K), 0);
    auto y = tl::load(b + kb * ldb + rn, (kb < K) & (rn < N), 0);
    acc = tl::dot(x, y, acc, ieee);
  }
  tl::store(c + rm * ldc + rn, acc, (rm < M) & (rn < N));
}

void matmul_case(Context& ctx, DType t) {
  auto k = TESSERA_KERNEL(bp_matmul_kernel, a, b, c, M, N, K, lda, ldb, ldc, BM, BN, BK, BLOCKPTR);
  const int m = 50, n = 40, kk = 70, lda = 72, ldb = 41, bm = 32, bn = 32, bk = 16;
  // Small integers: every product and sum is exact in f32, so both kernels must give the
  // reference exactly whatever their order of addition.
  auto small_ints = [&](size_t count) {
    HostArray h(t, count);
    for (size_t i = 0; i < count; ++i) h.set_f(i, static_cast<double>(ctx.uniform_int(-3, 3)));
    return h;
  };
  HostArray a = small_ints(size_t(m) * lda), b = small_ints(size_t(kk) * ldb);
  DevArray da = ctx.upload(a), db = ctx.upload(b);
  std::vector<double> want(size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int x = 0; x < kk; ++x)
        want[size_t(i) * n + j] += a.f(size_t(i) * lda + x) * b.f(size_t(x) * ldb + j);
  HostArray got[2];
  for (bool block : {false, true}) {
    DevArray o = ctx.poisoned(DType::f32, size_t(m) * n);
    k[{Grid(cdiv(m, bm), cdiv(n, bn))}](da.buf, db.buf, o.buf, m, n, kk, lda, ldb, n, bm, bn, bk,
                                        block);
    got[block] = ctx.download(o);
    ctx.check_close(std::string(block ? "block-pointer" : "pointer") + " matmul " + dname(t),
                    got[block], want, tol::kExact);
  }
  ctx.check_exact("block-pointer matmul against the pointer one " + dname(t), got[1], got[0]);
}

}  // namespace

void register_block_ptr(std::vector<Case>& out) {
  for (DType t : kNumericDTypes) {
    out.push_back({"block_ptr/copy/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { copy_case(ctx, t, false); }});
  }
  for (DType t : kFloatDTypes) {
    out.push_back({"block_ptr/copy_nan_padding/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { copy_case(ctx, t, true); }});
  }
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    out.push_back({"block_ptr/matmul/" + dname(t), needs_of({t}), "",
                   [t](Context& ctx) { matmul_case(ctx, t); }});
  }
}

}  // namespace tessera::conformance
