/// \file The attention rows of `tessera bench`: the forward pass of samples/kernels/attention.h,
/// fp16 and bf16, batch 4 x 32 heads x sequence 4096, head dimension 128 (and 64 for fp16), plain
/// and causal, over a table of block sizes, num_warps and num_stages (the fastest that passes is
/// reported, as for matmul); checked against fp64 on sampled rows of sampled heads. The kernel is
/// attention_kernel (pointer tiles, rows "attention"), or attention_desc_kernel (descriptors, TMA
/// on sm_90: "attention_desc") with its key loop warp-specialized or not ("attention_desc_ws").
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "bench/harness.h"
#include "bench/matmul.h"
#include "samples/kernels/attention.h"

namespace tessera::bench {
namespace {

using samples::attention_desc_kernel;
using samples::attention_kernel;

/// Which kernel a row runs (the file's comment).
enum class Form { Pointers, Descriptors, WarpSpecialized };

struct AttentionShape {
  int64_t batch, heads, seq, dim;
  int64_t rows() const { return batch * heads * seq; }
};

struct AttentionConfig {
  int block_m, block_n, num_warps, num_stages;
  int maxnreg = 0;  ///< registers per thread at most (0: no limit)
};

std::string config_label(const AttentionConfig& c) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) +
         " num_warps=" + std::to_string(c.num_warps) +
         " num_stages=" + std::to_string(c.num_stages) +
         (c.maxnreg ? " maxnreg=" + std::to_string(c.maxnreg) : "");
}

/// BLOCK_M x BLOCK_N tiles: 128 query rows over 8 warps (two warpgroups on Hopper) or 64 over 4;
/// 64 or 128 keys per step; 128 registers at most per thread, so that two programs share a
/// multiprocessor, for the 8-warp 128x64 tiles. The table is every device's: on NVIDIA's Vulkan
/// driver (48 KiB) 128x128 at head dimension 128 fits by staging each dot's K in chunks of 64.
/// TESSERA_BENCH_CONFIG keeps the configurations whose label contains its text, as for matmul
/// (peers.py's ATTENTION mirrors the table).
std::vector<AttentionConfig> attention_configs() {
  static const std::vector<AttentionConfig> table = {
      {128, 64, 8, 2}, {128, 64, 8, 3},      {128, 128, 8, 2},    {64, 64, 4, 2},
      {64, 64, 4, 3},  {128, 64, 8, 2, 128}, {128, 64, 8, 3, 128}};
  const char* only = std::getenv("TESSERA_BENCH_CONFIG");
  if (!only || !*only) return table;
  std::vector<AttentionConfig> kept;
  for (const AttentionConfig& c : table)
    if (config_label(c).find(only) != std::string::npos) kept.push_back(c);
  return kept;
}

/// The inputs, the output, and the fp64 reference of the sampled rows.
template <class T>
struct Problem {
  Buffer<T> q, k, v, out;
  std::vector<int64_t> rows;       ///< sampled global rows (head * seq + position)
  std::vector<double> ref, scale;  ///< per sampled row, dim values each
};

template <class T>
Problem<T> make_problem(Bench& b, const std::string& name, const AttentionShape& s, bool causal) {
  const size_t n = size_t(s.rows() * s.dim);
  const uint64_t seed = b.seed_for(name);
  const auto hq = random_values<T>(n, -1, 1, seed), hk = random_values<T>(n, -1, 1, seed + 1),
             hv = random_values<T>(n, -1, 1, seed + 2);
  Problem<T> p;
  p.q = b.device().upload(hq), p.k = b.device().upload(hk), p.v = b.device().upload(hv);
  p.out = b.device().template alloc<T>(n);
  // Every row of a small problem; else 8 positions (the first, the last, six between) of each
  // of 16 heads spread over the batch.
  const int64_t heads = s.batch * s.heads;
  for (int64_t h = 0; h < heads; h += b.small() ? 1 : std::max<int64_t>(1, heads / 16))
    for (int64_t i = 0; i < s.seq; i += b.small() ? 1 : std::max<int64_t>(1, s.seq / 7))
      p.rows.push_back(h * s.seq + std::min(i, s.seq - 1));
  p.ref.resize(p.rows.size() * s.dim);
  p.scale.resize(p.ref.size());
  const double sm_scale = 1.0 / std::sqrt(double(s.dim));
  parallel_for(
      p.rows.size(),
      [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
          const int64_t head = p.rows[r] / s.seq, i = p.rows[r] % s.seq;
          const int64_t keys = causal ? i + 1 : s.seq;
          const size_t qrow = size_t(p.rows[r] * s.dim);
          std::vector<double> w(size_t(keys), 0.0);
          double top = -INFINITY, l = 0;
          for (int64_t j = 0; j < keys; ++j) {
            const size_t krow = size_t((head * s.seq + j) * s.dim);
            double dot = 0;
            for (int64_t d = 0; d < s.dim; ++d)
              dot += static_cast<double>(hq[qrow + d]) * static_cast<double>(hk[krow + d]);
            top = std::max(top, w[j] = dot * sm_scale);
          }
          for (double& x : w) l += (x = std::exp(x - top));
          for (int64_t d = 0; d < s.dim; ++d) {
            double acc = 0, size = 0;
            for (int64_t j = 0; j < keys; ++j) {
              const double pv =
                  w[j] * static_cast<double>(hv[size_t((head * s.seq + j) * s.dim + d)]);
              acc += pv, size += std::fabs(pv);
            }
            p.ref[r * s.dim + d] = acc / l;
            p.scale[r * s.dim + d] = size / l;
          }
        }
      },
      1);
  return p;
}

/// "attention", "attention_desc" or "attention_desc_ws", and "_causal" after it.
std::string kernel_name(Form form, bool causal) {
  const char* names[] = {"attention", "attention_desc", "attention_desc_ws"};
  return std::string(names[static_cast<int>(form)]) + (causal ? "_causal" : "");
}

template <class T>
void run_attention(Bench& b, const std::string& dtype, AttentionShape s, bool causal, Form form) {
  Row base;
  base.kernel = kernel_name(form, causal);
  base.dtype = dtype;
  base.shape = {s.batch, s.heads, s.seq, s.dim};
  base.workload = base.kernel + " " + dtype + " " + shape_label(base.shape);
  // Two products of 2 * seq * seq * dim flops per head; causal skips half of them (the
  // convention of FlashAttention's and Triton's benchmarks).
  base.flops = 4.0 * s.batch * s.heads * s.seq * s.seq * s.dim * (causal ? 0.5 : 1.0);
  base.bytes = 4.0 * s.rows() * s.dim * sizeof(T);
  base.detail = "inputs uniform in [-1, 1]; error relative to sum |p v| / sum p";
  // The weights enter the second product rounded to the input dtype, the output rounds once.
  base.tolerance = dtype == "fp16" ? 4e-3 : 3e-2;
  std::vector<Row> tried;
  Row setup = guarded(base, [&] {
    Problem<T> p = make_problem<T>(b, base.workload, s, causal);
    auto kernel = TESSERA_KERNEL(attention_kernel, q, k, v, out, qk_scale, seq, HEAD_DIM, BLOCK_M,
                                 BLOCK_N, CAUSAL);
    auto desc_kernel = TESSERA_KERNEL(attention_desc_kernel, q, k, v, out, qk_scale, seq, rows,
                                      HEAD_DIM, BLOCK_M, BLOCK_N, CAUSAL, WS);
    const auto rows = static_cast<int32_t>(s.rows());
    const float qk_scale = static_cast<float>(1.4426950408889634 / std::sqrt(double(s.dim)));
    const auto seq = static_cast<int32_t>(s.seq);
    const auto dim = static_cast<int>(s.dim);
    for (const AttentionConfig& cfg : attention_configs()) {
      const LaunchOptions options{
          .num_warps = cfg.num_warps, .num_stages = cfg.num_stages, .maxnreg = cfg.maxnreg};
      const Grid grid(uint64_t((s.seq + cfg.block_m - 1) / cfg.block_m),
                      uint64_t(s.batch * s.heads));
      std::function<void()> launch = [&, grid, options, cfg] {
        if (form == Form::Pointers)
          kernel[{grid, options}](p.q, p.k, p.v, p.out, qk_scale, seq, dim, cfg.block_m,
                                  cfg.block_n, causal ? 1 : 0);
        else
          desc_kernel[{grid, options}](p.q, p.k, p.v, p.out, qk_scale, seq, rows, dim, cfg.block_m,
                                       cfg.block_n, causal ? 1 : 0,
                                       form == Form::WarpSpecialized ? 1 : 0);
      };
      Row row = base;
      row.config = config_label(cfg);
      tried.push_back(guarded(row, [&] {
        b.poison(p.out);
        launch();
        const auto ho = p.out.download();
        row.max_err = parallel_max(p.ref.size(), [&](size_t i) {
          const double got = static_cast<double>(ho[size_t(p.rows[i / s.dim] * s.dim) + i % s.dim]);
          const double e = std::fabs(got - p.ref[i]) / std::max(p.scale[i], 1e-30);
          return std::isnan(e) ? INFINITY : e;
        });
        return finish_config(b, row, launch, p.out, config_timed(b, tried));
      }));
    }
    return base;
  });
  if (tried.empty() && setup.status == "pass") {
    setup.status = "skip";
    setup.detail += "; no configuration of the table matches TESSERA_BENCH_CONFIG";
  }
  b.add(tried.empty() ? setup : best_of(tried));
}

}  // namespace

void add_attention_cases(std::vector<Case>& cases, bool small) {
  auto add = [&](const std::string& dtype, AttentionShape s, bool causal,
                 void (*run)(Bench&, const std::string&, AttentionShape, bool, Form),
                 Form form = Form::Pointers) {
    cases.push_back({kernel_name(form, causal) + " " + dtype + " " +
                         shape_label({s.batch, s.heads, s.seq, s.dim}),
                     [=](Bench& b) { run(b, dtype, s, causal, form); }});
  };
  // Small: a sequence that is not a multiple of any block.
  const AttentionShape d128 =
      small ? AttentionShape{1, 2, 100, 128} : AttentionShape{4, 32, 4096, 128};
  const AttentionShape d64 =
      small ? AttentionShape{1, 2, 100, 64} : AttentionShape{4, 32, 4096, 64};
  for (bool causal : {false, true}) add("fp16", d128, causal, run_attention<half>);
  add("bf16", d128, false, run_attention<bfloat16>);
  add("fp16", d64, false, run_attention<half>);
  // The descriptor kernel, plain and warp-specialized, at the goal's shape.
  for (Form form : {Form::Descriptors, Form::WarpSpecialized})
    for (bool causal : {false, true}) add("fp16", d128, causal, run_attention<half>, form);
}

}  // namespace tessera::bench
