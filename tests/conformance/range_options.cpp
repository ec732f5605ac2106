/// \file tl::range's per-loop options (Triton's num_stages, loop_unroll_factor and flatten on
/// tl.range): a matmul whose K loop has each set of options gives the exact integer-valued
/// reference on every device, the pipelined lowerings (simt:cuda-sm_90a's rings) included.
#include "tests/conformance/framework.h"

namespace tessera::conformance {
namespace {

/// The loop options of mode 0..3: none, no pipelining, three stages with the unused hints, two.
tl::RangeOptions options_of(int mode) {
  switch (mode) {
    case 1:
      return {.num_stages = 1};
    case 2:
      return {.num_stages = 3, .loop_unroll_factor = 2, .flatten = true};
    case 3:
      return {.num_stages = 2, .loop_unroll_factor = 1};
    default:
      return {};
  }
}

/// c [M, N] = a [M, K] x b [K, N] (contiguous rows) in f32, IEEE products, K loop with the
/// options of MODE.
void range_matmul_kernel(tl::pointer a, tl::pointer b, tl::ptr<float> c, tl::i32 M, tl::i32 N,
                         tl::i32 K, int BM, int BN, int BK, int MODE) {
  auto rm = tl::program_id(0) * BM + tl::arange(0, BM)[{tl::_, tl::None}];  // (BM, 1)
  auto rn = tl::program_id(1) * BN + tl::arange(0, BN)[{tl::None, tl::_}];  // (1, BN)
  auto rk = tl::arange(0, BK);
  auto acc = tl::zeros<float>({BM, BN});
  for (auto k : tl::range(0, K, BK, options_of(MODE))) {
    auto ka = k + rk[{tl::None, tl::_}];  // (1, BK)
    auto kb = k + rk[{tl::_, tl::None}];  // (BK, 1)
    auto x = tl::load(a + rm * K + ka, (rm < M) & (ka < K), 0);
    auto y = tl::load(b + kb * N + rn, (kb < K) & (rn < N), 0);
    acc = tl::dot(x, y, acc, tl::InputPrecision::Ieee);
  }
  tl::store(c + rm * N + rn, acc, (rm < M) & (rn < N));
}

void range_case(Context& ctx, DType t, int mode) {
  auto k = TESSERA_KERNEL(range_matmul_kernel, a, b, c, M, N, K, BM, BN, BK, MODE);
  const int m = 48, n = 40, kk = 100, bm = 32, bn = 32, bk = 16;
  auto small_ints = [&](size_t count) {  // every product and sum exact in f32
    HostArray h(t, count);
    for (size_t i = 0; i < count; ++i) h.set_f(i, static_cast<double>(ctx.uniform_int(-3, 3)));
    return h;
  };
  HostArray a = small_ints(size_t(m) * kk), b = small_ints(size_t(kk) * n);
  std::vector<double> want(size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int x = 0; x < kk; ++x)
        want[size_t(i) * n + j] += a.f(size_t(i) * kk + x) * b.f(size_t(x) * n + j);
  DevArray da = ctx.upload(a), db = ctx.upload(b), o = ctx.poisoned(DType::f32, want.size());
  k[{Grid(cdiv(m, bm), cdiv(n, bn)), {.num_stages = 3}}](da.buf, db.buf, o.buf, m, n, kk, bm, bn,
                                                         bk, mode);
  ctx.check_close("matmul with loop options " + std::to_string(mode) + " " + dname(t),
                  ctx.download(o), want, tol::kExact);
}

}  // namespace

void register_range_options(std::vector<Case>& out) {
  for (DType t : {DType::f16, DType::f32}) {
    for (int mode : {0, 1, 2, 3}) {
      out.push_back({"control/range_options/" + std::to_string(mode) + "/" + dname(t),
                     needs_of({t}), "", [t, mode](Context& ctx) { range_case(ctx, t, mode); }});
    }
  }
}

}  // namespace tessera::conformance
