/// \file Matmul+ReLU cases: the samples' kernel generalized to a dtype (bench/kernels.h), f32
/// accumulation, output in the input dtype, in the plain 2-D program order, in Triton's grouped
/// order (GROUP_M = 8, a 1-D grid), and grouped with tensor descriptors. Every tile
/// configuration of the dtype's row in the table is checked and (see config_timed) timed and the
/// best is reported; a configuration the device cannot hold (shared memory, threads) is skipped
/// with the reason. The "autotuned" rows of the plain and grouped kernels run the same table
/// through tessera::autotune (runtime/autotune.h), key M, N, K: the first launch searches (or
/// reads the choice from the disk cache), the row times the chosen configuration, and its detail
/// says how long the search took. The int8 rows are in bench/matmul_int8.cpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <map>

#include "bench/harness.h"
#include "bench/kernels.h"
#include "bench/matmul.h"

namespace tessera::bench {

namespace {

/// Configurations timed in a small run (the first that pass; the others are checked only).
constexpr size_t kTimedSmall = 2;
/// Programs of the grouped kernel that walk down one column of C tiles together.
constexpr int kGroupM = 8;

/// The kernel of a row: the seed's (plain 2-D program order), grouped, grouped with tensor
/// descriptors (its C stored by masked stores, or with the `tma_store` option: by TMA on
/// sm_90a), the descriptor kernel with its K loop warp-specialized (`warp_specialize`: a TMA
/// producer warpgroup beside the consumers, on sm_90a; elsewhere the same kernel unspecialized),
/// either of those two launched in clusters of 2 programs (the `cluster` option: on sm_90a the
/// two programs of a cluster, neighbours in a column of C tiles, copy B once for both by TMA
/// multicast), the descriptor kernel as a persistent one (a program per multiprocessor walking
/// the tiles in grouped order), or Triton's tutorial source (grouped, `%`-wrapped rows and
/// columns).
enum class Variant {
  Plain,
  Grouped,
  Descriptor,
  DescriptorTmaStore,
  DescriptorWs,
  DescriptorWsTmaStore,
  DescriptorCluster,
  DescriptorWsCluster,
  DescriptorPersistent,
  Tutorial
};

bool uses_descriptors(Variant v) {
  return v == Variant::Descriptor || v == Variant::DescriptorTmaStore ||
         v == Variant::DescriptorWs || v == Variant::DescriptorWsTmaStore ||
         v == Variant::DescriptorCluster || v == Variant::DescriptorWsCluster ||
         v == Variant::DescriptorPersistent;
}
bool stores_by_tma(Variant v) {
  return v == Variant::DescriptorTmaStore || v == Variant::DescriptorWsTmaStore;
}
bool warp_specialized(Variant v) {
  return v == Variant::DescriptorWs || v == Variant::DescriptorWsTmaStore ||
         v == Variant::DescriptorWsCluster;
}
/// Programs per cluster of the row's launches.
int cluster_of(Variant v) {
  return v == Variant::DescriptorCluster || v == Variant::DescriptorWsCluster ? 2 : 1;
}

std::string kernel_name(Variant v) {
  if (uses_descriptors(v))
    return std::string("matmul_relu_desc") + (warp_specialized(v) ? "_ws" : "") +
           (stores_by_tma(v) ? "_tma_store" : "") + (cluster_of(v) > 1 ? "_cluster2" : "") +
           (v == Variant::DescriptorPersistent ? "_persistent" : "");
  return v == Variant::Plain     ? "matmul_relu"
         : v == Variant::Grouped ? "matmul_relu_grouped"
                                 : "matmul_relu_tutorial";
}

}  // namespace

std::vector<MatmulConfig> matmul_configs(const std::string& dtype, int group_m) {
  // BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages. fp16/bf16: tiles for Hopper's tensor cores
  // (BLOCK_K 64, 3-4 stages), then the earlier table (128x128x32 / 8 / 3, 64x64x32 / 4 / 3) and
  // the large tiles with BLOCK_K 32 (whose stages fit 48 KiB of shared memory: Vulkan);
  // tf32 and int8: the large tiles with BLOCK_K scaled to the same 128 bytes per row (32 f32,
  // 128 i8 elements), and a small tile that any device holds; tf32 also 256x128 tiles (half of
  // B's N-major tile goes through registers on Hopper, against 128x256); int8 also 128x128x64
  // (two stages in 48 KiB).
  static const std::vector<MatmulConfig> half_table = {
      {128, 128, 64, 8, 3}, {128, 128, 64, 4, 4}, {128, 256, 64, 8, 3},
      {128, 256, 64, 8, 4}, {64, 128, 64, 4, 4},  {128, 128, 32, 8, 3},
      {64, 64, 32, 4, 3},   {128, 256, 32, 8, 3}, {256, 128, 32, 8, 3}};
  static const std::map<std::string, std::vector<MatmulConfig>> table = {
      {"tf32",
       {{128, 128, 32, 8, 3},
        {128, 128, 32, 4, 4},
        {128, 256, 32, 8, 3},
        {256, 128, 32, 8, 3},
        {256, 128, 32, 8, 4},
        {64, 64, 32, 4, 3}}},
      {"fp16", half_table},
      {"bf16", half_table},
      {"int8",
       {{128, 128, 128, 8, 3},
        {128, 256, 128, 8, 3},
        {128, 128, 128, 4, 4},
        {128, 128, 64, 8, 3},
        {64, 64, 64, 4, 3}}},
      // fp8 e4m3: int8's table (the same 128 bytes per row of K; B through registers).
      {"fp8e4m3",
       {{128, 128, 128, 8, 3},
        {128, 256, 128, 8, 3},
        {128, 128, 128, 4, 4},
        {128, 128, 64, 8, 3},
        {64, 64, 64, 4, 3}}},
  };
  const char* only = std::getenv("TESSERA_BENCH_CONFIG");
  if (!only || !*only) return table.at(dtype);
  std::vector<MatmulConfig> kept;
  for (const MatmulConfig& c : table.at(dtype))
    if (config_label(c, group_m).find(only) != std::string::npos) kept.push_back(c);
  return kept;
}

std::string config_label(const MatmulConfig& c, int group_m) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" +
         std::to_string(c.block_k) + (group_m ? " group=" + std::to_string(group_m) : "") +
         " num_warps=" + std::to_string(c.num_warps) +
         " num_stages=" + std::to_string(c.num_stages);
}

bool config_timed(const Bench& b, const std::vector<Row>& tried) {
  auto timed = [](const Row& r) { return r.status == "pass" && !std::isnan(r.median_us); };
  return !b.small() || size_t(std::count_if(tried.begin(), tried.end(), timed)) < kTimedSmall;
}

MatmulShape matmul_mid(bool small) {
  return small ? MatmulShape{72, 80, 96} : MatmulShape{4096, 4096, 4096};
}
MatmulShape matmul_big(bool small) {
  return small ? MatmulShape{136, 120, 104} : MatmulShape{8192, 8192, 8192};
}

std::vector<int64_t> sampled_rows(int64_t m, bool small) {
  std::vector<int64_t> rows;
  const int64_t step = small ? 1 : std::max<int64_t>(1, m / 64);
  for (int64_t i = 0; i < m; i += step) rows.push_back(i);
  if (rows.back() != m - 1) rows.push_back(m - 1);
  return rows;
}

Row finish_config(Bench& b, Row row, const std::function<void()>& launch, const BufferBase& out,
                  bool timed) {
  if (timed) return b.measure(row, launch, out, row.dtype);
  row.status = row.max_err <= row.tolerance ? "pass" : "fail";
  row.detail += (row.detail.empty() ? "" : "; ") + std::string("checked, not timed");
  return row;
}

namespace {

/// Host values as floats (fp16 and bf16 exactly).
template <class T>
std::vector<float> as_float(const std::vector<T>& v) {
  std::vector<float> out(v.size());
  parallel_for(v.size(), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = static_cast<float>(v[i]);
  });
  return out;
}

/// The fp64 reference of the sampled rows: ref[s * n + j] for the s-th sampled row.
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
  bool norm_wise = false;     ///< the error is ||out - ref|| / ||ref|| (TF32), else elementwise
};

template <class T>
Problem<T> make_problem(Bench& b, const Row& base, bool tf32, MatmulShape s) {
  Problem<T> p{s.m, s.n, s.k, {}, {}, {}, {}, {}, tf32};
  uint64_t seed = b.seed_for(base.workload);
  auto ha = random_values<T>(s.m * s.k, -1, 1, seed);
  auto hb = random_values<T>(s.k * s.n, -1, 1, seed + 1);
  p.a = b.device().upload(ha);
  p.b = b.device().upload(hb);
  p.c = b.device().template alloc<T>(s.m * s.n);
  p.rows = sampled_rows(s.m, b.small());
  p.ref = reference_rows(as_float(ha), as_float(hb), p.rows, s.n, s.k);
  return p;
}

/// Checks one configuration (`launch` writes p.c) and, when `timed`, times it.
template <class T>
Row run_config(Bench& b, Row row, const Problem<T>& p, const std::function<void()>& launch,
               bool timed) {
  b.poison(p.c);
  launch();
  auto hc = p.c.download();
  // Every element written (the flush left NaN), then the sampled rows against fp64.
  double unwritten = parallel_max(
      hc.size(), [&](size_t i) { return std::isnan(static_cast<double>(hc[i])) ? INFINITY : 0.0; });
  auto out = [&](size_t i) { return static_cast<double>(hc[p.rows[i / p.n] * p.n + i % p.n]); };
  double err = 0;
  if (p.norm_wise) {
    double diff = 0, norm = 0;
    for (size_t i = 0; i < p.ref.size(); ++i) {
      diff += (out(i) - p.ref[i]) * (out(i) - p.ref[i]);
      norm += p.ref[i] * p.ref[i];
    }
    err = std::isnan(diff) ? INFINITY : std::sqrt(diff / std::max(norm, 1e-300));
  } else {
    err = parallel_max(p.ref.size(), [&](size_t i) { return rel_err(out(i), p.ref[i]); });
  }
  row.max_err = std::max(unwritten, err);
  if (unwritten > 0) row.detail += "; unwritten (NaN) output elements";
  return finish_config(b, row, launch, p.c, timed);
}

/// The table's configurations as autotuning candidates.
std::vector<Config> autotune_configs(const std::vector<MatmulConfig>& table) {
  std::vector<Config> out;
  for (const MatmulConfig& c : table)
    out.push_back({{{"BLOCK_M", c.block_m}, {"BLOCK_N", c.block_n}, {"BLOCK_K", c.block_k}},
                   c.num_warps,
                   c.num_stages});
  return out;
}

/// The autotuned row of the plain or grouped kernel: the table through tessera::autotune. The
/// check's launch searches (outside the timing); the row is the chosen configuration's.
template <class T>
Row run_autotuned(Bench& b, Row row, const Problem<T>& p, const KernelBase& kernel, Variant variant,
                  const std::vector<MatmulConfig>& table) {
  AutotuneOptions o{.configs = autotune_configs(table),
                    .key = {"M", "N", "K"},
                    .grid =
                        [variant](const Meta& m) {
                          const uint64_t gm = cdiv(m["M"], m["BLOCK_M"]),
                                         gn = cdiv(m["N"], m["BLOCK_N"]);
                          return variant == Variant::Grouped ? Grid(gm * gn) : Grid(gm, gn);
                        },
                    .outputs = {"c_ptr"}};
  const Autotuner tuned(kernel, std::move(o));
  const auto M = static_cast<int32_t>(p.m), N = static_cast<int32_t>(p.n),
             K = static_cast<int32_t>(p.k);
  std::function<void()> launch = [&] {
    if (variant == Variant::Grouped)
      tuned(p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1, kGroupM);
    else
      tuned(p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1);
  };
  const auto t0 = std::chrono::steady_clock::now();
  if (variant == Variant::Grouped)
    tuned.best_config(p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1, kGroupM);
  else
    tuned.best_config(p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1);
  const double search_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const AutotuneReport report = tuned.last_report();
  const size_t chosen = report.chosen;
  row.config = config_label(table[chosen], variant == Variant::Plain ? 0 : kGroupM) + " autotuned";
  size_t discarded = 0;
  for (const AutotuneCandidate& c : report.candidates) discarded += !c.discarded.empty();
  char detail[160];
  if (report.from_disk)
    std::snprintf(detail, sizeof detail, "choice from the disk cache in %.1f ms", search_s * 1e3);
  else
    std::snprintf(detail, sizeof detail, "search of %zu configurations (%zu discarded) in %.2f s",
                  table.size(), discarded, search_s);
  row.detail += std::string("; ") + detail;
  return run_config(b, row, p, launch, true);
}

template <class T>
void run_matmul(Bench& b, const std::string& dtype, Variant variant, MatmulShape s,
                bool autotuned) {
  const bool tf32 = dtype == "tf32";
  Row base;
  base.kernel = kernel_name(variant);
  base.dtype = dtype;
  base.shape = {s.m, s.n, s.k};
  base.workload =
      base.kernel + " " + dtype + " " + shape_label(base.shape) + (autotuned ? " autotuned" : "");
  base.flops = 2.0 * s.m * s.n * s.k;
  base.bytes = double(s.m * s.k + s.k * s.n + s.m * s.n) * sizeof(T);
  base.detail = "inputs uniform in [-1, 1]";
  // fp16 and bf16 outputs round once: half an ulp is 2^-11 and 2^-8 relative. TF32 inputs are
  // rounded or truncated as the tensor cores take them (mma.sync after cvt.rna, wgmma truncates):
  // the error is norm-wise against the f32 inputs' product, as the peers measure it.
  base.tolerance = tf32 ? 2e-3 : dtype == "fp16" ? 2e-3 : 1e-2;
  std::vector<Row> tried;
  Row setup = guarded(base, [&] {
    Problem<T> p = make_problem<T>(b, base, tf32, s);
    auto plain =
        TESSERA_KERNEL(matmul_relu_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                       stride_bk, stride_bn, stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K);
    auto in_groups = TESSERA_KERNEL(matmul_relu_grouped_kernel, a_ptr, b_ptr, c_ptr, M, N, K,
                                    stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                                    stride_cn, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M);
    auto with_desc =
        TESSERA_KERNEL(matmul_relu_desc_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk,
                       stride_cm, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, WS);
    auto persistent =
        TESSERA_KERNEL(matmul_relu_desc_persistent_kernel, a_ptr, b_ptr, c_ptr, M, N, K, stride_am,
                       stride_bk, stride_cm, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M);
    auto tutorial = TESSERA_KERNEL(matmul_relu_tutorial_kernel, a_ptr, b_ptr, c_ptr, M, N, K,
                                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                                   BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M);
    const auto M = static_cast<int32_t>(s.m), N = static_cast<int32_t>(s.n),
               K = static_cast<int32_t>(s.k);
    const int group_m = variant == Variant::Plain ? 0 : kGroupM;
    const std::vector<MatmulConfig> configs = matmul_configs(dtype, group_m);
    if (autotuned && !configs.empty()) {
      tried.push_back(guarded(base, [&] {
        const KernelBase& kernel = variant == Variant::Grouped
                                       ? static_cast<const KernelBase&>(in_groups)
                                       : static_cast<const KernelBase&>(plain);
        return run_autotuned(b, base, p, kernel, variant, configs);
      }));
      return base;
    }
    for (size_t i = 0; i < configs.size(); ++i) {
      const MatmulConfig& cfg = configs[i];
      const uint64_t grid_m = cdiv(s.m, cfg.block_m), grid_n = cdiv(s.n, cfg.block_n);
      // The descriptor rows may take the workgroup-scope cooperative-matrix plan where the device
      // has VK_NV_cooperative_matrix2 (Vulkan with TESSERA_COOPMAT2=1; ignored elsewhere).
      // TESSERA_BENCH_GROUPED_LAUNCH=0: the hardware's program order (an A/B of the grouped
      // launch order, core/passes/grouped_launch.h; only the plain 2-D grid's rows take it).
      const char* grouped = std::getenv("TESSERA_BENCH_GROUPED_LAUNCH");
      const bool desc = uses_descriptors(variant);
      const LaunchOptions options{.num_warps = cfg.num_warps,
                                  .num_stages = cfg.num_stages,
                                  .coopmat2 = desc,
                                  .grouped_launch = !(grouped && std::string(grouped) == "0"),
                                  .tma_store = stores_by_tma(variant),
                                  .cluster = cluster_of(variant)};
      // The persistent row: one program per multiprocessor.
      const uint64_t programs =
          std::min<uint64_t>(grid_m * grid_n, multiprocessors_or_132(b.device()));
      std::function<void()> launch = [&, grid_m, grid_n, programs, options] {
        if (variant == Variant::Grouped)
          in_groups[{Grid(grid_m * grid_n), options}](p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1,
                                                      cfg.block_m, cfg.block_n, cfg.block_k,
                                                      kGroupM);
        else if (variant == Variant::Tutorial)
          tutorial[{Grid(grid_m * grid_n), options}](p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1,
                                                     cfg.block_m, cfg.block_n, cfg.block_k,
                                                     kGroupM);
        else if (variant == Variant::DescriptorPersistent)
          persistent[{Grid(programs), options}](p.a, p.b, p.c, M, N, K, K, N, N, cfg.block_m,
                                                cfg.block_n, cfg.block_k, kGroupM);
        else if (desc)
          with_desc[{Grid(grid_m * grid_n), options}](p.a, p.b, p.c, M, N, K, K, N, N, cfg.block_m,
                                                      cfg.block_n, cfg.block_k, kGroupM,
                                                      warp_specialized(variant) ? 1 : 0);
        else
          plain[{Grid(grid_m, grid_n), options}](p.a, p.b, p.c, M, N, K, K, 1, N, 1, N, 1,
                                                 cfg.block_m, cfg.block_n, cfg.block_k);
      };
      Row row = base;
      row.config = config_label(cfg, group_m);
      if ((grid_m * grid_n) % static_cast<uint64_t>(cluster_of(variant)) != 0) {
        row.status = "skip";  // the launch would be an Argument error
        row.detail = std::to_string(grid_m * grid_n) +
                     " programs, not a multiple of the cluster (" +
                     std::to_string(cluster_of(variant)) + "); " + row.detail;
        tried.push_back(row);
        continue;
      }
      tried.push_back(
          guarded(row, [&] { return run_config(b, row, p, launch, config_timed(b, tried)); }));
    }
    return base;
  });
  if (tried.empty() && setup.status == "pass") {  // TESSERA_BENCH_CONFIG left no configuration
    setup.status = "skip";
    setup.detail += "; no configuration of the table matches TESSERA_BENCH_CONFIG";
  }
  b.add(tried.empty() ? setup : best_of(tried));
}

}  // namespace

void add_matmul_cases(std::vector<Case>& cases, bool small) {
  auto add = [&](const std::string& dtype, MatmulShape s, Variant variant,
                 void (*run)(Bench&, const std::string&, Variant, MatmulShape, bool)) {
    cases.push_back({kernel_name(variant) + " " + dtype + " " + shape_label({s.m, s.n, s.k}),
                     [=](Bench& b) { run(b, dtype, variant, s, false); }});
  };
  // The autotuned rows of the plain and grouped kernels, after the hand-swept ones.
  auto add_tuned = [&](const std::string& dtype, MatmulShape s,
                       void (*run)(Bench&, const std::string&, Variant, MatmulShape, bool)) {
    for (Variant v : {Variant::Plain, Variant::Grouped})
      cases.push_back(
          {kernel_name(v) + " " + dtype + " " + shape_label({s.m, s.n, s.k}) + " autotuned",
           [=](Bench& b) { run(b, dtype, v, s, true); }});
  };
  const MatmulShape mid = matmul_mid(small), big = matmul_big(small);
  constexpr Variant kAll[] = {Variant::Plain, Variant::Grouped, Variant::Descriptor};
  add("tf32", mid, Variant::Plain, run_matmul<float>);
  for (Variant v : kAll) add("fp16", mid, v, run_matmul<half>);
  for (Variant v : kAll) add("bf16", mid, v, run_matmul<bfloat16>);
  for (Variant v : kAll) add("fp16", big, v, run_matmul<half>);
  for (Variant v : kAll) add("bf16", big, v, run_matmul<bfloat16>);
  // The descriptor kernel with a TMA-store epilogue (the `tma_store` option), beside it.
  add("fp16", mid, Variant::DescriptorTmaStore, run_matmul<half>);
  add("fp16", big, Variant::DescriptorTmaStore, run_matmul<half>);
  add("bf16", big, Variant::DescriptorTmaStore, run_matmul<bfloat16>);
  // Its K loop warp-specialized (the `warp_specialize` range option), with either epilogue.
  add("fp16", mid, Variant::DescriptorWs, run_matmul<half>);
  add("fp16", big, Variant::DescriptorWs, run_matmul<half>);
  add("bf16", big, Variant::DescriptorWs, run_matmul<bfloat16>);
  add("fp16", big, Variant::DescriptorWsTmaStore, run_matmul<half>);
  // The persistent form (one program per multiprocessor walking the tiles).
  add("fp16", mid, Variant::DescriptorPersistent, run_matmul<half>);
  add("fp16", big, Variant::DescriptorPersistent, run_matmul<half>);
  add("bf16", big, Variant::DescriptorPersistent, run_matmul<bfloat16>);
  // Either launched in clusters of 2 (the `cluster` option; TMA multicast of B on sm_90a).
  for (Variant v : {Variant::DescriptorCluster, Variant::DescriptorWsCluster}) {
    add("fp16", mid, v, run_matmul<half>);
    add("fp16", big, v, run_matmul<half>);
    add("bf16", big, v, run_matmul<bfloat16>);
  }
  // Triton's tutorial source (its `%` wrapping) under the same table, beside the peers'.
  add("fp16", mid, Variant::Tutorial, run_matmul<half>);
  add("fp16", big, Variant::Tutorial, run_matmul<half>);
  add_tuned("fp16", mid, run_matmul<half>);
  add_tuned("bf16", mid, run_matmul<bfloat16>);
  add_tuned("fp16", big, run_matmul<half>);
  add_tuned("bf16", big, run_matmul<bfloat16>);
}

}  // namespace tessera::bench
