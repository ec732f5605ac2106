/// \file Tensor descriptors (tl::make_tensor_descriptor): blocks read and written at offsets that
/// lie inside the tensor, across its edges and before its start (elements outside read as zero
/// and are never written), padded row strides, ranks 1 to 3, i64 index arithmetic, and matmuls
/// whose operands and output go through descriptors with M, N and K not multiples of the block,
/// with strides of any size and with 16-byte strides (TMA's, on sm_90a), plain and persistent
/// (fewer programs than tiles, a loop over tiles around the K loop); with CompileOptions::
/// tma_store, blocks stored by TMA on sm_90a.
#include <cmath>

#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

/// y's block (pid0, pid1) = x's block shifted by (dr, dc), both rows x cols with row strides.
void desc_copy_kernel(tl::pointer x, tl::pointer y, tl::i32 rows, tl::i32 cols, tl::i32 sx,
                      tl::i32 sy, tl::i32 dr, tl::i32 dc, int BR, int BC) {
  auto dx = tl::make_tensor_descriptor(x, {rows, cols}, {sx, 1}, {BR, BC});
  auto dy = tl::make_tensor_descriptor(y, {rows, cols}, {sy, 1}, {BR, BC});
  auto r0 = tl::program_id(0) * BR, c0 = tl::program_id(1) * BC;
  dy.store({r0, c0}, dx.load({r0 + dr, c0 + dc}));
}

/// A rank-3 tensor [d0, d1, d2] with i64 strides (i64 index arithmetic) and a rank-1 one.
void desc_rank_kernel(tl::ptr<float> x, tl::ptr<float> y, tl::ptr<float> v, tl::ptr<float> w,
                      tl::i64 d0, tl::i64 d1, tl::i64 d2, tl::i32 n, int B0, int B1, int B2,
                      int BN) {
  auto dx = tl::make_tensor_descriptor(x, {d0, d1, d2}, {d1 * d2, d2, 1}, {B0, B1, B2});
  auto dy = tl::make_tensor_descriptor(y, {d0, d1, d2}, {d1 * d2, d2, 1}, {B0, B1, B2});
  auto i = tl::program_id(0);
  dy.store({0, i * B1, 0}, dx.load({0, i * B1, 0}) * 2.0f);
  auto dv = tl::make_tensor_descriptor(v, {n}, {1}, {BN});
  auto dw = tl::make_tensor_descriptor(w, {n}, {1}, {BN});
  dw.store({i * BN}, dv.load({i * BN - 1}) + 1.0f);  // v shifted by one: v[-1] reads zero
}

/// C = A B (f32 accumulation) with every operand and the output through descriptors; WS: the K
/// loop asks for warp specialization.
void desc_matmul_kernel(tl::pointer a, tl::pointer b, tl::ptr<float> c, tl::i32 M, tl::i32 N,
                        tl::i32 K, int BM, int BN, int BK, int WS) {
  auto da = tl::make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
  auto db = tl::make_tensor_descriptor(b, {K, N}, {N, 1}, {BK, BN});
  auto dc = tl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
  auto m0 = tl::program_id(0) * BM, n0 = tl::program_id(1) * BN;
  auto acc = tl::zeros<float>({BM, BN});
  for (auto k : tl::range(0, K, BK, {.warp_specialize = WS != 0}))
    acc = tl::dot(da.load({m0, k}), db.load({k, n0}), acc);
  dc.store({m0, n0}, acc);
}

/// The same product as a persistent kernel: fewer programs than C tiles, each walking the tiles
/// pid, pid + num_programs, ... (Triton's persistent matmul without its TMA).
void desc_persistent_matmul_kernel(tl::pointer a, tl::pointer b, tl::ptr<float> c, tl::i32 M,
                                   tl::i32 N, tl::i32 K, int BM, int BN, int BK) {
  auto da = tl::make_tensor_descriptor(a, {M, K}, {K, 1}, {BM, BK});
  auto db = tl::make_tensor_descriptor(b, {K, N}, {N, 1}, {BK, BN});
  auto dc = tl::make_tensor_descriptor(c, {M, N}, {N, 1}, {BM, BN});
  auto tiles_n = tl::cdiv(N, BN);
  auto tiles = tl::cdiv(M, BM) * tiles_n;
  for (auto t : tl::range(tl::program_id(0), tiles, tl::num_programs(0))) {
    auto m0 = t / tiles_n * BM, n0 = t % tiles_n * BN;
    auto acc = tl::zeros<float>({BM, BN});
    for (auto k : tl::range(0, K, BK)) acc = tl::dot(da.load({m0, k}), db.load({k, n0}), acc);
    dc.store({m0, n0}, acc);
  }
}

void add(std::vector<Case>& out, std::string name, std::vector<Need> needs,
         std::function<void(Context&)> body) {
  out.push_back({"descriptor/" + std::move(name), std::move(needs), "", std::move(body)});
}

/// With `tma_store`, y's row stride is 64 elements (a multiple of 16 bytes, so that on sm_90a
/// its blocks are stored by TMA: 32 columns of f32, f16 and i8 are rows of 128, 64 and 32
/// bytes, each swizzle once); else 50. `cols` 48 is a multiple of 16 bytes in every dtype (the
/// launch proves it: TMA stores, which write whole 16-byte chunks); 45 is not (masked stores
/// even with tma_store: a TMA store would write columns 45 to 47).
void copy_case(Context& ctx, DType t, bool tma_store = false, int cols = 45) {
  auto k = TESSERA_KERNEL(desc_copy_kernel, x, y, rows, cols, sx, sy, dr, dc, BR, BC);
  const int rows = 37, sx = 48, sy = tma_store ? 64 : 50, BR = 16, BC = 32;
  const CompileOptions options{.tma_store = tma_store};
  HostArray x = ctx.random_full(t, size_t(rows) * sx);
  DevArray dx = ctx.upload(x);
  const int shifts[][2] = {{0, 0}, {-1, -3}, {5, 7}, {-20, 40}};
  for (const auto& s : shifts) {
    const int dr = s[0], dc = s[1];
    DevArray o = ctx.poisoned(t, size_t(rows) * sy);
    k[{Grid(cdiv(rows, BR), cdiv(cols, BC)), options}](dx.buf, o.buf, rows, cols, sx, sy, dr, dc,
                                                       BR, BC);
    HostArray want(t, size_t(rows) * sy);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < sy; ++c) {
        const int xr = r + dr, xc = c + dc;
        const bool inside = xr >= 0 && xr < rows && xc >= 0 && xc < cols;
        want.set_bits(size_t(r) * sy + c, c >= cols ? Context::poison_bits(t)  // never written
                                          : inside  ? x.bits(size_t(xr) * sx + xc)
                                                    : 0);  // zero of every dtype
      }
    ctx.check_exact(dname(t) + " " + std::to_string(cols) + " columns, shift (" +
                        std::to_string(dr) + ", " + std::to_string(dc) + ")",
                    ctx.download(o), want);
  }
}

void rank_case(Context& ctx) {
  auto k = TESSERA_KERNEL(desc_rank_kernel, x, y, v, w, d0, d1, d2, n, B0, B1, B2, BN);
  const int d0 = 3, d1 = 10, d2 = 6, n = 29, B0 = 4, B1 = 4, B2 = 8, BN = 8;
  const int programs = cdiv(d1, B1);  // 3 blocks along d1 cover it; along n, 3 of 8 cover 24
  HostArray x = ctx.random(DType::f32, size_t(d0) * d1 * d2, -4, 4),
            v = ctx.random(DType::f32, n, -4, 4);
  DevArray dx = ctx.upload(x), dv = ctx.upload(v), y = ctx.poisoned(DType::f32, x.size()),
           w = ctx.poisoned(DType::f32, n);
  k[{programs}](dx.buf, y.buf, dv.buf, w.buf, int64_t{d0}, int64_t{d1}, int64_t{d2}, n, B0, B1, B2,
                BN);
  std::vector<double> want_y(x.size()), want_w(n, NAN);
  for (size_t i = 0; i < x.size(); ++i) want_y[i] = 2 * x.f(i);
  for (int i = 0; i < programs * BN && i < n; ++i) want_w[i] = (i >= 1 ? v.f(i - 1) : 0.0) + 1;
  ctx.check_close("rank 3, i64 strides", ctx.download(y), want_y, tol::kExact);
  HostArray got_w = ctx.download(w), head(DType::f32, programs * BN);
  for (int i = 0; i < programs * BN; ++i) head.set_bits(i, got_w.bits(i));
  ctx.check_close("rank 1, offset -1", head,
                  std::vector<double>(want_w.begin(), want_w.begin() + programs * BN), tol::kExact);
  ctx.check_untouched("rank 1 past the blocks", got_w, programs * BN, n);
}

/// A matmul's sizes and blocks.
struct MatmulShape {
  int M, N, K, BM, BN, BK;
};

void matmul_case(Context& ctx, DType t, bool persistent, MatmulShape s, bool tma_store = false,
                 bool ws = false, int cluster = 1) {
  // Clustered: four stages, so that a program's copies would overwrite a stage another
  // program's wgmma still reads, were they not made to wait for it (the SIMT interpreter reports
  // that race; with three, the copies' own mbarriers already order them).
  const CompileOptions options{
      .num_stages = cluster > 1 ? 4 : 3, .tma_store = tma_store, .cluster = cluster};
  auto k = TESSERA_KERNEL(desc_matmul_kernel, a, b, c, M, N, K, BM, BN, BK, WS);
  auto kp = TESSERA_KERNEL(desc_persistent_matmul_kernel, a, b, c, M, N, K, BM, BN, BK);
  const auto [M, N, K, BM, BN, BK] = s;
  HostArray a = ctx.random(t, size_t(M) * K, -1, 1), b = ctx.random(t, size_t(K) * N, -1, 1);
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(DType::f32, size_t(M) * N);
  if (persistent)  // two programs fewer than tiles: two programs take two tiles
    kp[{cdiv(M, BM) * cdiv(N, BN) - 2, options}](da.buf, db.buf, o.buf, M, N, K, BM, BN, BK);
  else
    k[{Grid(cdiv(M, BM), cdiv(N, BN)), options}](da.buf, db.buf, o.buf, M, N, K, BM, BN, BK,
                                                 ws ? 1 : 0);
  std::vector<double> want(size_t(M) * N), scale(want.size());
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      for (int l = 0; l < K; ++l) {
        const double p = a.f(size_t(i) * K + l) * b.f(size_t(l) * N + j);
        want[size_t(i) * N + j] += p, scale[size_t(i) * N + j] += std::fabs(p);
      }
  ctx.check_close(
      dname(t) + " " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
      ctx.download(o), want, tol::dot(DType::f32, K), &scale);
}

/// 70x50x40 in 32x32x16 blocks: strides not known to be multiples of 16 bytes, so every target
/// reads the operands with masked loads.
constexpr MatmulShape kMasked = {70, 50, 40, 32, 32, 16};
/// 100x48x80 in 64x32x32 blocks: N and K multiples of 16 (16-byte strides and offsets), the
/// blocks wgmma's: on sm_90a the ring copies A and B by TMA, rows, columns and K past the
/// tensor's edges read as zero.
constexpr MatmulShape kTma = {100, 48, 80, 64, 32, 32};
/// 256x48x320 in 64x32x32 blocks: a grid of 4 x 2 programs, 10 iterations of the K loop (more
/// than a ring has stages, so each stage is refilled), M's edge inside the last block row.
constexpr MatmulShape kCluster = {250, 48, 320, 64, 32, 32};

}  // namespace

void register_descriptors(std::vector<Case>& out) {
  for (DType t : {DType::f32, DType::f16, DType::i8})
    add(out, "copy_2d/" + dname(t), needs_of(t), [t](Context& ctx) { copy_case(ctx, t); });
  // With tma_store (CompileOptions): on sm_90a the blocks are stored by TMA (each swizzle once),
  // elsewhere the option changes nothing.
  for (DType t : {DType::f32, DType::f16, DType::i8})
    add(out, "copy_2d_tma_store/" + dname(t), needs_of(t), [t](Context& ctx) {
      copy_case(ctx, t, true, 48);
      copy_case(ctx, t, true, 45);
    });
  add(out, "rank_1_and_3", {Need::Int64}, rank_case);
  for (DType t : {DType::f16, DType::bf16}) {
    add(out, "matmul/" + dname(t), needs_of(t),
        [t](Context& ctx) { matmul_case(ctx, t, false, kMasked); });
    add(out, "matmul_16b_strides/" + dname(t), needs_of(t),
        [t](Context& ctx) { matmul_case(ctx, t, false, kTma); });
  }
  add(out, "persistent_matmul/f16", needs_of(DType::f16),
      [](Context& ctx) { matmul_case(ctx, DType::f16, true, kMasked); });
  add(out, "persistent_matmul_16b_strides/f16", needs_of(DType::f16),
      [](Context& ctx) { matmul_case(ctx, DType::f16, true, kTma); });
  // The TMA ring and a TMA-store epilogue (sm_90a), in a plain and a persistent kernel.
  add(out, "matmul_16b_strides_tma_store/f16", needs_of(DType::f16),
      [](Context& ctx) { matmul_case(ctx, DType::f16, false, kTma, true); });
  add(out, "persistent_matmul_16b_strides_tma_store/f16", needs_of(DType::f16),
      [](Context& ctx) { matmul_case(ctx, DType::f16, true, kTma, true); });
  // The K loop warp-specialized (sm_90a: a TMA producer warpgroup; elsewhere the same kernel as
  // without the option), with masked and TMA stores.
  add(out, "matmul_16b_strides_ws/f16", needs_of(DType::f16),
      [](Context& ctx) { matmul_case(ctx, DType::f16, false, kTma, false, true); });
  add(out, "matmul_16b_strides_ws_tma_store/f16", needs_of(DType::f16),
      [](Context& ctx) { matmul_case(ctx, DType::f16, false, kTma, true, true); });
  // Clusters of 2 and 4 programs along x (sm_90a: the programs of a block column share B's
  // copies, each copying its slice of rows to all; A's boxes differ, each copies its own; every
  // other target runs the grid without clusters), plain, warp-specialized and persistent (whose
  // K loop is nested: nothing is shared, the launch is clustered).
  for (const int n : {2, 4}) {
    const std::string c = "_cluster" + std::to_string(n) + "/f16";
    add(out, "matmul_16b_strides" + c, needs_of(DType::f16),
        [n](Context& ctx) { matmul_case(ctx, DType::f16, false, kCluster, false, false, n); });
    add(out, "matmul_16b_strides_ws" + c, needs_of(DType::f16),
        [n](Context& ctx) { matmul_case(ctx, DType::f16, false, kCluster, true, true, n); });
  }
  add(out, "persistent_matmul_16b_strides_cluster2/f16", needs_of(DType::f16),
      [](Context& ctx) { matmul_case(ctx, DType::f16, true, kTma, false, false, 2); });
}

}  // namespace tessera::conformance
