/// \file Row-wise cases, one program per row: softmax (the samples' kernel; BLOCK the next power
/// of two of the row, num_warps by row length as Triton's tutorial), row sum (the samples'
/// kernel) and layer norm forward in fp32 and fp16 (bench/kernels.h), at the tutorial's sizes
/// and autotuned over BLOCK_SIZE and num_warps (tessera::autotune, key N).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>

#include "bench/harness.h"
#include "bench/kernels.h"
#include "samples/kernels/row_sum.h"
#include "samples/kernels/softmax.h"

namespace tessera::bench {
namespace {

int next_power_of_2(int64_t n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

/// Softmax warps by row length, as the brief and Triton's tutorial scale them: 4 up to 1024
/// columns, 8 up to 4096, 16 beyond; the row is timed at half and twice that too (at most 32
/// warps), and the fastest kept, as the tuned Triton row does (bench/peers/workloads.py).
int softmax_warps(int block) {
  return block <= 1024 ? 4 : block <= 4096 ? 8 : 16;
}
std::vector<int> softmax_warp_choices(int block) {
  int w = softmax_warps(block);
  return {w / 2, w, std::min(2 * w, 32)};
}

/// Row sum: the sample's tile walk.
constexpr int kRowSumBlock = 1024;
constexpr int kRowSumWarps = 4;

/// Layer norm, as Triton's tutorial sizes it: the row in at most 64 KiB per tile, 1 warp per 256
/// columns up to 8.
int layer_norm_block(int64_t n, int elem_bytes) {
  return std::min(65536 / elem_bytes, next_power_of_2(n));
}
int layer_norm_warps(int block) {
  return std::clamp(block / 256, 1, 8);
}
/// An autotuned row kernel's candidates: BLOCK_SIZE the powers of two from 1024 (or max_block,
/// if less) to max_block, each with those of 2, 4, 8 and 16 warps that leave every thread at
/// least `per_thread` elements of a tile.
std::vector<Config> block_warp_configs(int max_block, int per_thread) {
  std::vector<Config> out;
  for (int block = std::min(1024, max_block); block <= max_block; block *= 2)
    for (int warps : {2, 4, 8, 16})
      if (block / (warps * 32) >= per_thread) out.push_back({{{"BLOCK_SIZE", block}}, warps, 1});
  return out;
}

/// The autotuned layer norm's candidates: BLOCK_SIZE from 1024 to the tutorial's, with 2 to 16
/// warps that leave each thread at least 2 elements of a tile.
std::vector<Config> layer_norm_configs(int max_block) {
  return block_warp_configs(max_block, 2);
}

/// The rows-per-program layer norm's candidates: the row in one tile (BLOCK_SIZE `block`), 1 or
/// 2 rows per program, x read through L1 or past it (STREAM), w and b loaded with x or where
/// used (EARLY), 4 to 16 warps that leave each thread at least 4 elements.
std::vector<Config> layer_norm_rows_configs(int block) {
  std::vector<Config> out;
  for (int rows : {1, 2})
    for (int stream : {0, 1})
      for (int early : {0, 1})
        for (int warps : {4, 8, 16})
          if (rows * block / (warps * 32) >= 4)
            out.push_back(
                {{{"ROWS", rows}, {"STREAM", stream}, {"EARLY", early}, {"BLOCK_SIZE", block}},
                 warps,
                 1});
  return out;
}

/// The persistent layer norm's candidates: the row in one tile (BLOCK_SIZE `block`), the next
/// row's x loaded ahead, w and b held in registers or loaded per row (HOLD_WB), one or two
/// programs an SM (PER_SM), 4 to 16 warps that leave each thread at least 2 elements. At 8192 fp16
/// columns ptxas gives HOLD_WB = 1 255 / 157 / 94 registers at 4 / 8 / 16 warps (2 / 1 / 1 blocks
/// an SM), HOLD_WB = 0 198 / 114 / 60 (2 blocks each). (The first form also searched no
/// prefetch, STREAM and 32 warps with one program an SM: on an H100 no prefetch was 38 % slower
/// and STREAM within 0.5 %, twenty-seventh session's run 1.)
std::vector<Config> layer_norm_persistent_configs(int block) {
  std::vector<Config> out;
  for (int hold : {1, 0})
    for (int per_sm : {1, 2})
      for (int warps : {4, 8, 16})
        if (block / (warps * 32) >= 2)
          out.push_back({{{"HOLD_WB", hold}, {"PER_SM", per_sm}, {"BLOCK_SIZE", block}}, warps, 1});
  return out;
}

Row base_row(const std::string& kernel, const std::string& dtype, int64_t m, int64_t n) {
  Row r;
  r.kernel = kernel;
  r.dtype = dtype;
  r.shape = {m, n};
  r.workload = kernel + " " + dtype + " " + shape_label(r.shape);
  return r;
}

std::string warps_label(int block, int warps) {
  return "BLOCK=" + std::to_string(block) + " num_warps=" + std::to_string(warps);
}

/// An autotuned row's configuration: BLOCK_SIZE and num_warps, then the other parameters chosen.
std::string tuned_label(const Config& chosen) {
  std::string label = warps_label(static_cast<int>(chosen["BLOCK_SIZE"]), chosen.num_warps);
  for (const auto& [name, value] : chosen.params)
    if (name != "BLOCK_SIZE") label += " " + name + "=" + std::to_string(value);
  return label + " autotuned";
}

void run_softmax(Bench& b, int64_t m, int64_t n) {
  const Device& dev = b.device();
  const int block = next_power_of_2(n);
  Row base = base_row("softmax", "fp32", m, n);
  base.bytes = 2.0 * m * n * sizeof(float);
  base.tolerance = 1e-6;  // outputs below 1: an absolute error (as samples/03_softmax)
  auto hx = random_values<float>(m * n, -5, 5, b.seed_for(base.workload));
  std::vector<double> row_max(m), row_sum(m);
  parallel_for(m, [&](size_t begin, size_t end) {
    for (size_t r = begin; r < end; ++r) {
      const float* xr = &hx[r * n];
      double mx = *std::max_element(xr, xr + n), s = 0;
      for (int64_t c = 0; c < n; ++c) s += std::exp(double(xr[c]) - mx);
      row_max[r] = mx;
      row_sum[r] = s;
    }
  });
  // One upload and one Kernel for every warp count; a failure there is the row's.
  b.add(guarded(base, [&] {
    auto x = dev.upload(hx);
    auto y = dev.alloc<float>(m * n);
    auto softmax = TESSERA_KERNEL(samples::softmax_kernel, x_ptr, y_ptr, x_row_stride, y_row_stride,
                                  num_cols, BLOCK_SIZE);
    const auto cols = static_cast<int32_t>(n);
    std::vector<Row> tried;
    for (int warps : softmax_warp_choices(block)) {
      Row row = base;
      row.config = warps_label(block, warps);
      tried.push_back(guarded(row, [&] {
        auto launch = [&] {
          softmax[{Grid(m), LaunchOptions{.num_warps = warps}}](x, y, cols, cols, cols, block);
        };
        b.poison(y);
        launch();
        auto h = y.download();
        row.max_err = parallel_max(m * n, [&](size_t i) {
          size_t r = i / n;
          return rel_err(h[i], std::exp(double(hx[i]) - row_max[r]) / row_sum[r]);
        });
        return b.measure(row, launch, y);
      }));
    }
    return best_of(tried);
  }));
}

/// The autotuned row sum's candidates: BLOCK_SIZE from 1024 to 8192 (at most the row's next
/// power of two), with 2 to 16 warps that leave each thread at least 4 elements of a tile.
std::vector<Config> row_sum_configs(int max_block) {
  return block_warp_configs(std::min(8192, max_block), 4);
}

void run_row_sum(Bench& b, int64_t m, int64_t n, bool autotuned) {
  const Device& dev = b.device();
  Row row = base_row("row_sum", "fp32", m, n);
  if (autotuned) row.workload += " autotuned";
  row.bytes = (double(m) * n + m) * sizeof(float);
  row.config = warps_label(kRowSumBlock, kRowSumWarps);
  b.add(guarded(row, [&] {
    auto hx = random_values<float>(m * n, -1, 1, b.seed_for(row.workload));
    auto x = dev.upload(hx);
    auto out = dev.alloc<float>(m);
    auto row_sum = TESSERA_KERNEL(samples::row_sum_kernel, x_ptr, out_ptr, N, BLOCK_SIZE);
    const auto cols = static_cast<int32_t>(n);
    std::function<void()> launch = [&] {
      row_sum[{Grid(m), LaunchOptions{.num_warps = kRowSumWarps}}](x, out, cols, kRowSumBlock);
    };
    std::optional<Autotuner> tuned;
    if (autotuned) {
      const std::vector<Config> configs = row_sum_configs(next_power_of_2(n));
      tuned.emplace(row_sum, AutotuneOptions{.configs = configs,
                                             .key = {"N"},
                                             .grid = [m](const Meta&) { return Grid(m); },
                                             .outputs = {"out_ptr"}});
      launch = [&] { (*tuned)(x, out, cols); };
      const Config chosen = tuned->best_config(x, out, cols);
      row.config = tuned_label(chosen);
    }
    b.poison(out);
    launch();
    auto h = out.download();
    row.tolerance = 1e-4;  // an f32 sum of n values in [-1, 1] (as samples/04_row_sum)
    row.max_err = parallel_max(m, [&](size_t r) {
      double s = 0;
      for (int64_t c = 0; c < n; ++c) s += hx[r * n + c];
      return rel_err(h[r], s);
    });
    return b.measure(row, launch, out);
  }));
}

/// The layer norm rows: the tutorial kernel at the tutorial's configuration, the same with
/// fp_fusion (Triton's default: a*b+c as one fma), the tutorial kernel autotuned,
/// the kernel that normalizes ROWS rows per program (one tile each), autotuned over ROWS, STREAM,
/// EARLY and num_warps, and the persistent kernel (PER_SM programs a multiprocessor walking the
/// rows), autotuned over HOLD_WB, PER_SM and num_warps.
enum class LayerNorm { Tutorial, Contracted, Autotuned, Rows, Persistent };

const char* layer_norm_suffix(LayerNorm v) {
  switch (v) {
    case LayerNorm::Tutorial:
      return "";
    case LayerNorm::Contracted:
      return " fp_fusion";
    case LayerNorm::Autotuned:
      return " autotuned";
    case LayerNorm::Rows:
      return " rows per program, autotuned";
    case LayerNorm::Persistent:
      return " persistent, autotuned";
  }
  return "";
}

/// "search of 24 configurations in 1.25 s" (or "choice from the disk cache of ...").
std::string search_detail(const Autotuner& tuned, const std::vector<Config>& configs,
                          double seconds) {
  char detail[120];
  std::snprintf(detail, sizeof detail, "%s of %zu configurations in %.2f s",
                tuned.last_report().from_disk ? "choice from the disk cache" : "search",
                configs.size(), seconds);
  return detail;
}

/// The largest relative error of layer norm's outputs (y, mean, rstd) against fp64 from the
/// inputs as stored.
template <class T>
double layer_norm_error(const std::vector<T>& hx, const std::vector<T>& hw,
                        const std::vector<T>& hb, const std::vector<T>& hy,
                        const std::vector<float>& hmean, const std::vector<float>& hrstd, int64_t m,
                        int64_t n, double eps) {
  return parallel_max(m, [&](size_t r) {
    const T* xr = &hx[r * n];
    double s = 0, sq = 0;
    for (int64_t c = 0; c < n; ++c) s += static_cast<double>(xr[c]);
    double mu = s / n;
    for (int64_t c = 0; c < n; ++c)
      sq += (static_cast<double>(xr[c]) - mu) * (static_cast<double>(xr[c]) - mu);
    double rs = 1.0 / std::sqrt(sq / n + eps);
    double worst = std::max(rel_err(hmean[r], mu), rel_err(hrstd[r], rs));
    for (int64_t c = 0; c < n; ++c) {
      double ref = (static_cast<double>(xr[c]) - mu) * rs * static_cast<double>(hw[c]) +
                   static_cast<double>(hb[c]);
      worst = std::max(worst, rel_err(static_cast<double>(hy[r * n + c]), ref));
    }
    return worst;
  });
}

template <class T>
void run_layer_norm(Bench& b, int64_t m, int64_t n, LayerNorm variant) {
  const bool autotuned = variant != LayerNorm::Tutorial && variant != LayerNorm::Contracted;
  const Device& dev = b.device();
  const bool f16 = std::is_same_v<T, half>;
  Row row = base_row("layer_norm", f16 ? "fp16" : "fp32", m, n);
  row.workload += layer_norm_suffix(variant);
  const int block = layer_norm_block(n, sizeof(T)), warps = layer_norm_warps(block);
  row.bytes = (2.0 * m * n + 2.0 * n) * sizeof(T) + 2.0 * m * sizeof(float);
  row.config = warps_label(block, warps);
  b.add(guarded(row, [&] {
    uint64_t seed = b.seed_for(row.workload);
    auto hx = random_values<T>(m * n, -3, 1, seed);
    auto hw = random_values<T>(n, 0.5f, 1.5f, seed + 1);
    auto hb = random_values<T>(n, -0.5f, 0.5f, seed + 2);
    auto x = dev.upload(hx), w = dev.upload(hw), bias = dev.upload(hb);
    auto y = dev.alloc<T>(m * n);
    auto mean = dev.alloc<float>(m), rstd = dev.alloc<float>(m);
    auto layer_norm = TESSERA_KERNEL(layer_norm_kernel, x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr,
                                     rstd_ptr, row_stride, N, eps, BLOCK_SIZE);
    auto layer_norm_rows =
        TESSERA_KERNEL(layer_norm_rows_kernel, x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, M,
                       row_stride, N, eps, ROWS, STREAM, EARLY, BLOCK_SIZE);
    auto layer_norm_persistent =
        TESSERA_KERNEL(layer_norm_persistent_kernel, x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr,
                       M, row_stride, N, eps, HOLD_WB, PER_SM, BLOCK_SIZE);
    const float eps = 1e-5f;
    const auto cols = static_cast<int32_t>(n);
    std::function<void()> launch = [&] {
      const LaunchOptions options{.num_warps = warps,
                                  .fp_fusion = variant == LayerNorm::Contracted};
      layer_norm[{Grid(m), options}](x, y, w, bias, mean, rstd, cols, cols, eps, block);
    };
    std::optional<Autotuner> tuned;
    if (autotuned) {
      const std::vector<Config> configs =
          variant == LayerNorm::Rows         ? layer_norm_rows_configs(next_power_of_2(n))
          : variant == LayerNorm::Persistent ? layer_norm_persistent_configs(next_power_of_2(n))
                                             : layer_norm_configs(block);
      // Tunes `kernel` launched on `grid`, sets `launch` to its tuned launch on `args` and
      // returns the choice.
      auto tune = [&](const KernelBase& kernel, std::function<Grid(const Meta&)> grid,
                      auto... args) {
        tuned.emplace(kernel, AutotuneOptions{.configs = configs,
                                              .key = {"N"},
                                              .grid = std::move(grid),
                                              .outputs = {"y_ptr", "mean_ptr", "rstd_ptr"}});
        launch = [&tuned, args...] { (*tuned)(args...); };
        return tuned->best_config(args...);
      };
      const auto t0 = std::chrono::steady_clock::now();
      const int32_t rows = static_cast<int32_t>(m);
      Config chosen;
      if (variant == LayerNorm::Rows) {
        chosen = tune(
            layer_norm_rows,
            [m](const Meta& meta) { return Grid(static_cast<uint32_t>(cdiv(m, meta["ROWS"]))); }, x,
            y, w, bias, mean, rstd, rows, cols, cols, eps);
      } else if (variant == LayerNorm::Persistent) {
        // The persistent row: PER_SM programs a multiprocessor, at most one per four rows, so
        // that every program walks rows (the --quick sizes too).
        const int64_t sms = multiprocessors_or_132(dev);
        chosen = tune(
            layer_norm_persistent,
            [m, sms](const Meta& meta) {
              return Grid(
                  static_cast<uint32_t>(std::clamp<int64_t>(m / 4, 1, sms * meta["PER_SM"])));
            },
            x, y, w, bias, mean, rstd, rows, cols, cols, eps);
      } else {
        chosen = tune(
            layer_norm, [m](const Meta&) { return Grid(m); }, x, y, w, bias, mean, rstd, cols, cols,
            eps);
      }
      const double search_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      row.config = tuned_label(chosen);
      row.detail += (row.detail.empty() ? "" : "; ") + search_detail(*tuned, configs, search_s);
    }
    b.poison(y);
    mean.fill(NAN);
    rstd.fill(NAN);
    launch();
    auto hy = y.download();
    auto hmean = mean.download(), hrstd = rstd.download();
    // fp64 from the inputs as stored; fp16 outputs round once (half an ulp: 2^-11 relative).
    row.tolerance = f16 ? 4e-3 : 1e-4;
    row.max_err = layer_norm_error<T>(hx, hw, hb, hy, hmean, hrstd, m, n, eps);
    return b.measure(row, launch, y);
  }));
}

}  // namespace

void add_row_cases(std::vector<Case>& cases, bool small) {
  struct Shape {
    int64_t m, n;
  };
  const std::vector<Shape> softmax =
      small ? std::vector<Shape>{{64, 200}, {32, 3000}, {8, 9000}}
            : std::vector<Shape>{{16384, 1024}, {8192, 4096}, {4096, 16384}};
  for (Shape s : softmax)
    cases.push_back(
        {"softmax fp32 " + shape_label({s.m, s.n}), [s](Bench& b) { run_softmax(b, s.m, s.n); }});
  const Shape sum = small ? Shape{129, 5001} : Shape{4096, 16384};
  for (bool autotuned : {false, true})
    cases.push_back(
        {"row_sum fp32 " + shape_label({sum.m, sum.n}) + (autotuned ? " autotuned" : ""),
         [sum, autotuned](Bench& b) { run_row_sum(b, sum.m, sum.n, autotuned); }});
  const Shape ln = small ? Shape{64, 1000} : Shape{4096, 8192};
  for (LayerNorm v : {LayerNorm::Tutorial, LayerNorm::Contracted, LayerNorm::Autotuned,
                      LayerNorm::Rows, LayerNorm::Persistent}) {
    const std::string suffix = layer_norm_suffix(v);
    cases.push_back({"layer_norm fp32 " + shape_label({ln.m, ln.n}) + suffix,
                     [ln, v](Bench& b) { run_layer_norm<float>(b, ln.m, ln.n, v); }});
    cases.push_back({"layer_norm fp16 " + shape_label({ln.m, ln.n}) + suffix,
                     [ln, v](Bench& b) { run_layer_norm<half>(b, ln.m, ln.n, v); }});
  }
}

}  // namespace tessera::bench
