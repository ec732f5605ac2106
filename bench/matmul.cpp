/// \file Matmul+ReLU cases: the samples' kernel generalized to a dtype (bench/kernels.h), f32
/// accumulation, output in the input dtype. Every tile configuration of the dtype's row in
/// kMatmulConfigs is checked and timed and the best is reported; a configuration the device
/// cannot hold (shared memory, threads) is skipped with the reason. Tune by editing the table.
#include <algorithm>
#include <cmath>
#include <map>

#include "bench/harness.h"
#include "bench/kernels.h"

namespace tessera::bench {
namespace {

struct MatmulConfig {
  int block_m, block_n, block_k, num_warps, num_stages;
};

/// The tile configurations tried per input dtype ("tf32" is f32 inputs on the TF32 path).
const std::map<std::string, std::vector<MatmulConfig>>& matmul_configs() {
  static const std::map<std::string, std::vector<MatmulConfig>> table = {
      {"tf32", {{128, 128, 32, 8, 3}, {64, 64, 32, 4, 3}}},
      {"fp16", {{128, 128, 32, 8, 3}, {64, 64, 32, 4, 3}}},
      {"bf16", {{128, 128, 32, 8, 3}, {64, 64, 32, 4, 3}}},
  };
  return table;
}

std::string config_label(const MatmulConfig& c) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" +
         std::to_string(c.block_k) + " num_warps=" + std::to_string(c.num_warps) +
         " num_stages=" + std::to_string(c.num_stages);
}

/// Host values as the device multiplies them: fp16/bf16 exactly, f32 rounded to TF32.
template <class T>
std::vector<float> as_multiplied(const std::vector<T>& v, bool tf32) {
  std::vector<float> out(v.size());
  parallel_for(v.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      float f = static_cast<float>(v[i]);
      out[i] = tf32 ? round_to_tf32(f) : f;
    }
  });
  return out;
}

/// The fp64 reference of the rows the check samples (all rows of small problems, 64 spread
/// rows and the last of large ones): ref[s * n + j] for the s-th sampled row.
std::vector<double> reference_rows(const std::vector<float>& a, const std::vector<float>& b,
                                   const std::vector<int64_t>& rows, int64_t n, int64_t k) {
  std::vector<double> ref(rows.size() * n, 0.0);
  parallel_for(
      rows.size(),
      [&](size_t begin, size_t end) {
        for (size_t s = begin; s < end; ++s) {
          double* acc = &ref[s * n];
          for (int64_t kk = 0; kk < k; ++kk) {
            double av = a[rows[s] * k + kk];
            const float* br = &b[kk * n];
            for (int64_t j = 0; j < n; ++j) acc[j] += av * br[j];
          }
          for (int64_t j = 0; j < n; ++j) acc[j] = std::max(acc[j], 0.0);
        }
      },
      1);
  return ref;
}

/// One problem: device buffers and the sampled fp64 reference.
template <class T>
struct Problem {
  int64_t m, n, k;
  Buffer<T> a, b, c;
  std::vector<int64_t> rows;  ///< the rows the check compares
  std::vector<double> ref;    ///< ref[s * n + j]: row rows[s], column j
};

template <class T>
Problem<T> make_problem(Bench& b, const Row& base, bool tf32, int64_t m, int64_t n, int64_t k) {
  Problem<T> p{m, n, k, {}, {}, {}, {}, {}};
  uint64_t seed = b.seed_for(base.workload);
  auto ha = random_values<T>(m * k, -1, 1, seed);
  auto hb = random_values<T>(k * n, -1, 1, seed + 1);
  p.a = b.device().upload(ha);
  p.b = b.device().upload(hb);
  p.c = b.device().template alloc<T>(m * n);
  const int64_t step = b.small() ? 1 : std::max<int64_t>(1, m / 64);
  for (int64_t i = 0; i < m; i += step) p.rows.push_back(i);
  if (p.rows.back() != m - 1) p.rows.push_back(m - 1);
  p.ref = reference_rows(as_multiplied(ha, tf32), as_multiplied(hb, tf32), p.rows, n, k);
  return p;
}

/// Checks and times one tile configuration.
template <class T, class Matmul>
Row run_config(Bench& b, Row row, const MatmulConfig& cfg, const Problem<T>& p,
               const Matmul& matmul) {
  const auto M = static_cast<int32_t>(p.m), N = static_cast<int32_t>(p.n),
             K = static_cast<int32_t>(p.k);
  Grid grid(cdiv(p.m, cfg.block_m), cdiv(p.n, cfg.block_n));
  LaunchOptions options{.num_warps = cfg.num_warps, .num_stages = cfg.num_stages};
  auto launch = [&] {
    matmul[{grid, options}](p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1, cfg.block_m, cfg.block_n,
                            cfg.block_k);
  };
  b.poison(p.c);
  launch();
  auto hc = p.c.download();
  // Every element written (the flush left NaN), then the sampled rows against fp64.
  double unwritten = parallel_max(
      hc.size(), [&](size_t i) { return std::isnan(static_cast<double>(hc[i])) ? INFINITY : 0.0; });
  double err = parallel_max(p.rows.size() * p.n, [&](size_t i) {
    return rel_err(static_cast<double>(hc[p.rows[i / p.n] * p.n + i % p.n]), p.ref[i]);
  });
  row.max_err = std::max(unwritten, err);
  if (unwritten > 0) row.detail = "unwritten (NaN) output elements";
  return b.measure(row, launch, p.c, row.dtype);
}

template <class T>
void run_matmul(Bench& b, const std::string& dtype, int64_t m, int64_t n, int64_t k) {
  const bool tf32 = dtype == "tf32";
  Row base;
  base.kernel = "matmul_relu";
  base.dtype = dtype;
  base.shape = {m, n, k};
  base.workload = "matmul_relu " + dtype + " " + shape_label(base.shape);
  base.flops = 2.0 * m * n * k;
  base.bytes = double(m * k + k * n + m * n) * sizeof(T);
  // fp16 and bf16 outputs round once: half an ulp is 2^-11 and 2^-8 relative.
  base.tolerance = tf32 ? 1e-3 : dtype == "fp16" ? 2e-3 : 1e-2;
  std::vector<Row> tried;
  Row setup = guarded(base, [&] {
    Problem<T> p = make_problem<T>(b, base, tf32, m, n, k);
    auto matmul =
        TESSERA_KERNEL(matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                       stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K);
    for (const MatmulConfig& cfg : matmul_configs().at(dtype)) {
      Row row = base;
      row.config = config_label(cfg);
      tried.push_back(guarded(row, [&] { return run_config(b, row, cfg, p, matmul); }));
    }
    return base;
  });
  b.add(tried.empty() ? setup : best_of(tried));
}

}  // namespace

void add_matmul_cases(std::vector<Case>& cases, bool small) {
  struct Shape {
    int64_t m, n, k;
  };
  const Shape mid = small ? Shape{72, 80, 96} : Shape{4096, 4096, 4096};
  const Shape big = small ? Shape{136, 120, 104} : Shape{8192, 8192, 8192};
  auto add = [&](const std::string& dtype, Shape s,
                 void (*run)(Bench&, const std::string&, int64_t, int64_t, int64_t)) {
    cases.push_back({"matmul_relu " + dtype + " " + shape_label({s.m, s.n, s.k}),
                     [=](Bench& b) { run(b, dtype, s.m, s.n, s.k); }});
  };
  add("tf32", mid, run_matmul<float>);
  add("fp16", mid, run_matmul<half>);
  add("bf16", mid, run_matmul<bfloat16>);
  add("fp16", big, run_matmul<half>);
  add("bf16", big, run_matmul<bfloat16>);
}

}  // namespace tessera::bench
