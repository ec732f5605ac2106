/// \file int8 x int8 -> int32 matmul cases: sampled rows compared exactly with an int64 reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "bench/harness.h"
#include "bench/kernels.h"
#include "bench/matmul.h"
#include "bench/matmul_lowp.h"

namespace tessera::bench {
namespace {

/// What the checked run's output holds before the kernel writes it: no product of int8 matrices
/// with K < 2^17 reaches it (|C| <= K * 2^14).
constexpr int32_t kUnwritten = INT32_MIN;

/// Integers uniform in [-128, 127] (floor of uniform floats in [-128, 128)), the same whatever
/// the number of threads.
std::vector<int8_t> random_int8(size_t n, uint64_t seed) {
  std::vector<float> u = random_values<float>(n, -128, 128, seed);
  std::vector<int8_t> v(n);
  parallel_for(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) v[i] = static_cast<int8_t>(std::floor(u[i]));
  });
  return v;
}

void run_matmul_int8(Bench& b, MatmulShape s) {
  const Device& dev = b.device();
  Row base;
  base.kernel = "matmul";
  base.dtype = "int8";
  base.shape = {s.m, s.n, s.k};
  base.workload = "matmul int8 " + shape_label(base.shape);
  base.flops = 2.0 * s.m * s.n * s.k;
  base.bytes = double(s.m * s.k + s.k * s.n) + 4.0 * s.m * s.n;
  base.detail = "int8 uniform in [-128, 127]";
  base.tolerance = 0;  // integer arithmetic: exact
  run_lowp_matmul(b, base, "int8", [&](auto each_config) {
    uint64_t seed = b.seed_for(base.workload);
    auto ha = random_int8(s.m * s.k, seed);
    auto hb = random_int8(s.k * s.n, seed + 1);
    auto a = dev.upload(ha), bm = dev.upload(hb);
    auto c = dev.alloc<int32_t>(s.m * s.n);
    const std::vector<int64_t> rows = sampled_rows(s.m, b.small());
    const std::vector<int64_t> ref = reference_rows<int64_t>(ha, hb.data(), rows, s.n, s.k);
    auto matmul =
        TESSERA_KERNEL(matmul_int8_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                       stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K);
    const auto M = static_cast<int32_t>(s.m), N = static_cast<int32_t>(s.n),
               K = static_cast<int32_t>(s.k);
    each_config([&](Row& row, const MatmulConfig& cfg, bool timed) {
      Grid grid(cdiv(s.m, cfg.block_m), cdiv(s.n, cfg.block_n));
      LaunchOptions options{.num_warps = cfg.num_warps, .num_stages = cfg.num_stages};
      auto launch = [&] {
        matmul[{grid, options}](a, bm, c, M, N, K, K, 1, N, 1, N, 1, cfg.block_m, cfg.block_n,
                                cfg.block_k);
      };
      c.fill(kUnwritten);
      launch();
      auto hc = c.download();
      // Every element written, then the sampled rows against the exact product.
      bool unwritten = std::find(hc.begin(), hc.end(), kUnwritten) != hc.end();
      double err = parallel_max(rows.size() * s.n, [&](size_t e) {
        int64_t out = hc[rows[e / s.n] * s.n + e % s.n];
        return static_cast<double>(std::llabs(out - ref[e]));
      });
      row.max_err = unwritten ? INFINITY : err;
      if (unwritten) row.detail += "; unwritten output elements";
      return finish_config(b, row, launch, c, timed);
    });
  });
}

}  // namespace

void add_matmul_int8_cases(std::vector<Case>& cases, bool small) {
  for (MatmulShape s : {matmul_mid(small), matmul_big(small)})
    cases.push_back(
        {"matmul int8 " + shape_label({s.m, s.n, s.k}), [s](Bench& b) { run_matmul_int8(b, s); }});
}

}  // namespace tessera::bench
