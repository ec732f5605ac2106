/// \file fp8 e4m3 x e4m3 -> f32-accumulated matmul, stored as f16 (unit scales): the row beside
/// `torch._scaled_mm` in bench/peers/peers.py. Inputs uniform in [-1, 1] rounded to e4m3.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "bench/harness.h"
#include "bench/matmul.h"
#include "bench/matmul_lowp.h"
#include "core/support/float8.h"

namespace tessera::bench {
namespace {

using tl::_;
using tl::None;

/// C = A @ B for e4m3 A (M x K, row-major) and B (K x N, column-major: element (k, n) at
/// n * stride_bn + k, as torch._scaled_mm takes it and as Hopper's fp8 wgmma reads it from shared
/// memory), accumulated in f32 and stored as f16: the int8 kernel's tile walk with fp8 tiles.
void matmul_fp8_kernel(tl::ptr<float8_e4m3> a_ptr, tl::ptr<float8_e4m3> b_ptr, tl::ptr<half> c_ptr,
                       tl::i32 M, tl::i32 N, tl::i32 K, tl::i32 stride_am, tl::i32 stride_bn,
                       tl::i32 stride_cm, int BLOCK_M, int BLOCK_N, int BLOCK_K) {
  auto indices_m = tl::program_id(0) * BLOCK_M + tl::arange(0, BLOCK_M);
  auto indices_n = tl::program_id(1) * BLOCK_N + tl::arange(0, BLOCK_N);
  auto indices_k = tl::arange(0, BLOCK_K);
  auto a_ptrs = a_ptr + indices_m[{_, None}] * stride_am + indices_k[{None, _}];
  auto b_ptrs = b_ptr + indices_k[{_, None}] + indices_n[{None, _}] * stride_bn;
  auto acc = tl::zeros<float>({BLOCK_M, BLOCK_N});
  for (auto k : tl::range(0, K, BLOCK_K)) {
    auto a = tl::load(a_ptrs, (indices_m[{_, None}] < M) & (indices_k[{None, _}] + k < K), 0);
    auto b = tl::load(b_ptrs, (indices_k[{_, None}] + k < K) & (indices_n[{None, _}] < N), 0);
    acc = tl::dot(a, b, acc);
    a_ptrs += BLOCK_K;
    b_ptrs += BLOCK_K;
  }
  auto c_ptrs = c_ptr + indices_m[{_, None}] * stride_cm + indices_n[{None, _}];
  tl::store(c_ptrs, acc.to(tl::float16), (indices_m[{_, None}] < M) & (indices_n[{None, _}] < N));
}

/// Uniform values in [-1, 1) rounded to e4m3, the same whatever the number of threads.
std::vector<float8_e4m3> random_e4m3(size_t n, uint64_t seed) {
  std::vector<float> u = random_values<float>(n, -1, 1, seed);
  std::vector<float8_e4m3> v(n);
  parallel_for(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) v[i] = float8_e4m3(u[i]);
  });
  return v;
}

/// The elements as doubles (exact), B's form for reference_rows.
std::vector<double> widened(const std::vector<float8_e4m3>& v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<double>(v[i]);
  return out;
}

void run_matmul_fp8(Bench& b, MatmulShape s) {
  const Device& dev = b.device();
  Row base;
  base.kernel = "matmul";
  base.dtype = "fp8e4m3";
  base.shape = {s.m, s.n, s.k};
  base.workload = "matmul fp8e4m3 " + shape_label(base.shape);
  base.flops = 2.0 * s.m * s.n * s.k;
  base.bytes = double(s.m * s.k + s.k * s.n) + 2.0 * s.m * s.n;
  base.detail = "e4m3 of uniform [-1, 1], f32 accumulation, f16 out, unit scales";
  // Relative to max(1, |ref|). Hopper's fp8 wgmma keeps about 14 bits of its running sum
  // (Triton's default, max_num_imprecise_acc = K, does not promote either): measured 0.21 at
  // K = 8192 on the H200, against 0.018 for cuBLAS, which promotes to f32 every few k-steps.
  base.tolerance = 0.25;
  run_lowp_matmul(b, base, "fp8e4m3", [&](auto each_config) {
    const uint64_t seed = b.seed_for(base.workload);
    auto ha = random_e4m3(s.m * s.k, seed);
    auto hb = random_e4m3(s.k * s.n, seed + 1);
    std::vector<float8_e4m3> hb_col(hb.size());  // B column-major (N x K rows)
    for (int64_t kk = 0; kk < s.k; ++kk)
      for (int64_t j = 0; j < s.n; ++j) hb_col[j * s.k + kk] = hb[kk * s.n + j];
    auto a = dev.upload(ha), bm = dev.upload(hb_col);
    auto c = dev.alloc<half>(s.m * s.n);
    const std::vector<int64_t> rows = sampled_rows(s.m, b.small());
    const std::vector<double> ref = reference_rows<double>(ha, widened(hb).data(), rows, s.n, s.k);
    auto matmul = TESSERA_KERNEL(matmul_fp8_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                                 stride_bn, stride_cm, BLOCK_M, BLOCK_N, BLOCK_K);
    const auto M = static_cast<int32_t>(s.m), N = static_cast<int32_t>(s.n),
               K = static_cast<int32_t>(s.k);
    each_config([&](Row& row, const MatmulConfig& cfg, bool timed) {
      Grid grid(cdiv(s.m, cfg.block_m), cdiv(s.n, cfg.block_n));
      LaunchOptions options{.num_warps = cfg.num_warps, .num_stages = cfg.num_stages};
      auto launch = [&] {
        matmul[{grid, options}](a, bm, c, M, N, K, K, K, N, cfg.block_m, cfg.block_n, cfg.block_k);
      };
      b.poison(c);
      launch();
      auto hc = c.download();
      // Every element written (the poison is NaN), then the sampled rows against fp64.
      const double unwritten = parallel_max(hc.size(), [&](size_t i) {
        return std::isnan(static_cast<double>(hc[i])) ? INFINITY : 0.0;
      });
      const double err = parallel_max(rows.size() * s.n, [&](size_t e) {
        return rel_err(static_cast<double>(hc[rows[e / s.n] * s.n + e % s.n]), ref[e]);
      });
      row.max_err = std::max(unwritten, err);
      if (unwritten > 0) row.detail += "; unwritten (NaN) output elements";
      return finish_config(b, row, launch, c, timed);
    });
  });
}

}  // namespace

/// The fp8 matmul rows (bench/bench.cpp lists them with the others).
void add_matmul_fp8_cases(std::vector<Case>& cases, bool small) {
  const MatmulShape s = matmul_big(small);
  cases.push_back(
      {"matmul fp8e4m3 " + shape_label({s.m, s.n, s.k}), [s](Bench& b) { run_matmul_fp8(b, s); }});
}

}  // namespace tessera::bench
