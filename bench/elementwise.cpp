/// \file Elementwise cases: the copy that sets the bandwidth ceiling (several configs, the best
/// taken), a one-program copy (what timing itself costs), vector add and GeLU. Sizes: GPU runs
/// move gigabytes (far past L2); small runs use sizes that are not multiples of the block, so
/// masks are exercised.
#include <cmath>
#include <span>

#include "bench/harness.h"
#include "bench/kernels.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/vector_add.h"

namespace tessera::bench {
namespace {

/// One elementwise launch configuration.
struct Config {
  int block;
  int num_warps;
};

/// The copy's configurations: the ceiling is the best of them.
constexpr Config kCopyConfigs[] = {{1024, 4}, {4096, 8}};
/// GeLU and vector add: the samples' BLOCK, Triton's default num_warps.
constexpr Config kElementwise = {1024, 4};

std::string config_label(const Config& c) {
  return "BLOCK=" + std::to_string(c.block) + " num_warps=" + std::to_string(c.num_warps);
}

Row base_row(const std::string& kernel, int64_t n) {
  Row r;
  r.kernel = kernel;
  r.dtype = "fp32";
  r.shape = {n};
  r.workload = kernel + " fp32 " + std::to_string(n);
  return r;
}

/// The copy of n random floats, checked (exact) and timed under each configuration.
std::vector<Row> time_copy(Bench& b, const Row& base, int64_t n, std::span<const Config> configs) {
  const Device& dev = b.device();
  auto hx = random_values<float>(n, -1, 1, b.seed_for(base.workload));
  auto x = dev.upload(hx);
  auto y = dev.alloc<float>(n);
  auto copy = TESSERA_KERNEL(copy_kernel, src_ptr, dst_ptr, n, BLOCK);
  std::vector<Row> tried;
  for (const Config& c : configs) {
    Row row = base;
    row.config = config_label(c);
    tried.push_back(guarded(row, [&] {
      auto launch = [&] {
        copy[{Grid(cdiv(n, c.block)), LaunchOptions{.num_warps = c.num_warps}}](
            x, y, static_cast<int32_t>(n), c.block);
      };
      b.poison(y);
      launch();
      auto out = y.download();
      row.tolerance = 0;  // a copy is exact
      row.max_err = parallel_max(n, [&](size_t i) { return rel_err(out[i], hx[i]); });
      return b.measure(row, launch, y);
    }));
  }
  return tried;
}

void run_copy(Bench& b, int64_t n) {
  Row base = base_row("copy", n);
  base.bytes = 2.0 * n * sizeof(float);
  Row best = best_of(time_copy(b, base, n, kCopyConfigs));
  if (best.status == "pass") b.set_copy_bytes_per_s(best.bytes / (best.median_us * 1e-6));
  b.set_floor(best, "");
  b.add(best);
}

/// A copy of the bytes another row moves (n floats read and written), timed as that row is and
/// set beside the same floor: what a kernel of that size reaches at best, with the launch and the
/// timing's own cost (run_timing_cost) not amortized as in the big copy that sets the floor.
void run_copy_of_size(Bench& b, int64_t n, const std::string& like) {
  Row base = base_row("copy", n);
  base.workload += " (the bytes of " + like + ")";
  base.bytes = 2.0 * n * sizeof(float);
  Row best = best_of(time_copy(b, base, n, kCopyConfigs));
  b.set_floor(best, "");
  b.add(best);
}

void run_vector_add(Bench& b, int64_t n) {
  const Device& dev = b.device();
  Row row = base_row("vector_add", n);
  row.bytes = 3.0 * n * sizeof(float);
  row.config = config_label(kElementwise);
  b.add(guarded(row, [&] {
    uint64_t seed = b.seed_for(row.workload);
    auto hx = random_values<float>(n, -1, 1, seed);
    auto hy = random_values<float>(n, -1, 1, seed + 1);
    auto x = dev.upload(hx), y = dev.upload(hy);
    auto out = dev.alloc<float>(n);
    auto add = TESSERA_KERNEL(samples::vector_add_kernel, x_ptr, y_ptr, out_ptr, n, BLOCK);
    auto launch = [&] {
      add[{Grid(cdiv(n, kElementwise.block)), LaunchOptions{.num_warps = kElementwise.num_warps}}](
          x, y, out, static_cast<int32_t>(n), kElementwise.block);
    };
    b.poison(out);
    launch();
    auto h = out.download();
    row.tolerance = 0;  // the reference rounds as the device does: one f32 addition
    row.max_err = parallel_max(n, [&](size_t i) { return rel_err(h[i], hx[i] + hy[i]); });
    return b.measure(row, launch, out);
  }));
}

void run_gelu(Bench& b, int64_t n) {
  const Device& dev = b.device();
  Row row = base_row("gelu", n);
  row.bytes = 2.0 * n * sizeof(float);
  row.config = config_label(kElementwise);
  b.add(guarded(row, [&] {
    auto hx = random_values<float>(n, -4, 4, b.seed_for(row.workload));
    auto x = dev.upload(hx);
    auto y = dev.alloc<float>(n);
    auto gelu = TESSERA_KERNEL(samples::gelu_kernel, x_ptr, y_ptr, n, BLOCK);
    auto launch = [&] {
      gelu[{Grid(cdiv(n, kElementwise.block)), LaunchOptions{.num_warps = kElementwise.num_warps}}](
          x, y, static_cast<int32_t>(n), kElementwise.block);
    };
    b.poison(y);
    launch();
    auto h = y.download();
    // fp64 tanh form; f32 arithmetic and exp stay within a few ulps (as samples/02_gelu).
    row.tolerance = 1e-5;
    row.max_err = parallel_max(n, [&](size_t i) {
      double v = hx[i];
      double ref = 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      return rel_err(h[i], ref);
    });
    return b.measure(row, launch, y);
  }));
}

/// One program copying 1024 floats, timed as every kernel row is (flush before, device events
/// around the launch): what a row's time holds besides its kernel's work (launch latency, the
/// events, on Vulkan the barrier after the flush). Not a floor of bytes: no floor column.
void run_timing_cost(Bench& b) {
  constexpr int64_t n = 1024;
  constexpr Config one_program[] = {{1024, 4}};
  Row base = base_row("copy", n);
  base.workload += " (one program: the timing's own cost)";
  b.add(best_of(time_copy(b, base, n, one_program)));
}

}  // namespace

void add_copy_cases(std::vector<Case>& cases, bool small) {
  const int64_t n = small ? 100003 : int64_t{1} << 28;
  cases.push_back({"copy fp32 " + std::to_string(n), [n](Bench& b) { run_copy(b, n); }});
  cases.push_back({"copy fp32 1024 (one program)", run_timing_cost});
  // The row kernels' sizes (bench/rows.cpp): 128 MiB and 256 MiB moved.
  const struct {
    int64_t n;
    const char* like;
  } sizes[] = {{small ? 12800 : int64_t{1} << 24, "softmax 16384x1024, layer_norm fp16"},
               {small ? 25600 : int64_t{1} << 25, "softmax 8192x4096, layer_norm fp32"}};
  for (const auto& s : sizes)
    cases.push_back(
        {"copy fp32 " + std::to_string(s.n), [s](Bench& b) { run_copy_of_size(b, s.n, s.like); }});
}

void add_elementwise_cases(std::vector<Case>& cases, bool small) {
  const int64_t n_add = small ? 100003 : int64_t{1} << 27;
  const int64_t n_gelu = small ? 100003 : int64_t{1} << 28;
  cases.push_back({"vector_add fp32 " + std::to_string(n_add),
                   [n_add](Bench& b) { run_vector_add(b, n_add); }});
  cases.push_back(
      {"gelu fp32 " + std::to_string(n_gelu), [n_gelu](Bench& b) { run_gelu(b, n_gelu); }});
}

}  // namespace tessera::bench
