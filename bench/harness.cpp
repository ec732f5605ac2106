/// \file The measuring harness: host parallelism for inputs and references, the flush that
/// precedes every timed launch, the warm-up and event-timed runs, floors.
#include "bench/harness.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "bench/kernels.h"
#include "runtime/warmup.h"

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr int kFlushBlock = 1024;
constexpr size_t kGpuScratchBytes = size_t{256} << 20;  // as Triton's do_bench (H200 L2: 50 MB)
constexpr size_t kCpuScratchBytes = size_t{64} << 10;   // CPU devices: exercise the path only
constexpr int kMinRuns = 20;
constexpr int kMaxRuns = 100;
// A GPU row whose median is this far above its fastest run is timed again (a slow phase: 2.3x
// in the case that called for it; the one-program copy's own spread reaches 1.3x).
constexpr double kSpreadRetime = 1.5;

/// TESSERA_BENCH_WARMUP_LOG=1: each GPU warm-up window and timing on stderr, stamped with the
/// wall clock (seconds since the epoch), to set beside a log of the GPU's clocks.
void warmup_log(const char* what, double seconds, int runs) {
  static const bool on = [] {
    const char* v = std::getenv("TESSERA_BENCH_WARMUP_LOG");
    return v && *v && std::string(v) != "0";
  }();
  if (!on) return;
  double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::fprintf(stderr, "bench %s: t=%.3f %.1f us (%d runs)\n", what, now, seconds * 1e6, runs);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

void parallel_for(size_t n, const std::function<void(size_t, size_t)>& fn, size_t grain) {
  size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 32);
  threads = std::min(threads, (n + grain - 1) / std::max<size_t>(grain, 1));
  if (threads <= 1) return fn(0, n);
  size_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (size_t begin = 0; begin < n; begin += chunk)
    pool.emplace_back(fn, begin, std::min(n, begin + chunk));
  for (std::thread& t : pool) t.join();
}

int64_t multiprocessors_or_132(const Device& dev) {
  const int sms = dev.info().multiprocessors;
  return sms > 0 ? sms : 132;
}

double parallel_max(size_t n, const std::function<double(size_t)>& err) {
  std::mutex mutex;
  double worst = 0;
  parallel_for(n, [&](size_t begin, size_t end) {
    double local = 0;
    for (size_t i = begin; i < end; ++i) {
      double e = err(i);
      local = std::isnan(e) ? INFINITY : std::max(local, e);
    }
    std::lock_guard lock(mutex);
    worst = std::max(worst, local);
  });
  return worst;
}

template <class T>
std::vector<T> random_values(size_t n, float lo, float hi, uint64_t seed) {
  std::vector<T> v(n);
  parallel_for(n, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      float u = static_cast<float>(splitmix64(seed ^ (i * 0xd1b54a32d192ed03ull)) >> 40) * 0x1p-24f;
      v[i] = T(lo + (hi - lo) * u);
    }
  });
  return v;
}
template std::vector<float> random_values<float>(size_t, float, float, uint64_t);
template std::vector<half> random_values<half>(size_t, float, float, uint64_t);
template std::vector<bfloat16> random_values<bfloat16>(size_t, float, float, uint64_t);

std::string dtype_label(ir::DType t) {
  switch (t) {
    case ir::DType::f32:
      return "fp32";
    case ir::DType::f16:
      return "fp16";
    case ir::DType::bf16:
      return "bf16";
    default:
      return std::string(ir::dtype_name(t));
  }
}

std::string shape_label(const std::vector<int64_t>& shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

Bench::Bench(Device device, const Options& options)
    : dev_(std::move(device)),
      options_(options),
      small_(options.quick || (dev_.info().is_cpu && !options.full)) {
  size_t bytes = is_gpu() ? kGpuScratchBytes : kCpuScratchBytes;
  scratch_ = dev_.alloc<float>(bytes / sizeof(float));
  // Compiles the flush and brings up the device (context, compiler) outside any measurement.
  poison(scratch_);
  dev_.synchronize();
}

uint64_t Bench::seed_for(const std::string& name) const {
  uint64_t h = 1469598103934665603ull;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return splitmix64(options_.seed ^ h);
}

void Bench::poison(const BufferBase& out) {
  static const auto flush = TESSERA_KERNEL(flush_kernel, out_ptr, n_out, scratch_ptr, n_scratch,
                                           out_programs, poison, BLOCK);
  const int64_t n_out = static_cast<int64_t>(out.bytes() / (ir::dtype_bits(out.dtype()) / 8));
  const int64_t n_scratch = static_cast<int64_t>(scratch_.size());
  const int64_t out_programs = static_cast<int64_t>(cdiv(n_out, kFlushBlock));
  const int64_t programs = out_programs + static_cast<int64_t>(cdiv(n_scratch, kFlushBlock));
  flush[{programs}](out, static_cast<int32_t>(n_out), scratch_, static_cast<int32_t>(n_scratch),
                    static_cast<int32_t>(out_programs), NAN, kFlushBlock);
}

Timing Bench::time(const std::function<void()>& launch, const BufferBase& out) {
  const double target_s = is_gpu() ? 1.0 : 0.25;
  auto run_batch = [&](int batch) {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < batch; ++i) {
      poison(out);
      launch();
    }
    dev_.synchronize();
    return seconds_since(t0) / batch;
  };
  // Warm-up. On a GPU: windows of about 100 ms until warm_enough (runtime/warmup.h: the windows
  // of the last 0.25 s, and the last three, within 2 % of the last one, after 0.3 to 3 s), as
  // the GPU's clocks rise in steps after the pause for the case's reference. A CPU device: one
  // run.
  double per_run_s = run_batch(1);
  // The events of the timed runs (at most kMaxRuns) are made before the warm-up, so that the
  // timed runs follow its last window with no host work between.
  Stream stream = dev_.default_stream();
  std::vector<Event> starts, stops;
  for (int r = 0; r < kMaxRuns; ++r) {
    starts.push_back(dev_.create_event());
    stops.push_back(dev_.create_event());
  }
  auto warm_up = [&] {
    per_run_s = rt::warm_up(run_batch, per_run_s, [](double seconds, int batch) {
      warmup_log("warm-up window, time per run", seconds, batch);
    });
  };
  if (is_gpu()) warm_up();
  Timing t;
  int runs = static_cast<int>(
      std::clamp(target_s / std::max(per_run_s, 1e-9), double(kMinRuns), double(kMaxRuns)));
  if (per_run_s * kMinRuns > options_.seconds_per_case) {
    runs = std::max(3, static_cast<int>(options_.seconds_per_case / per_run_s));
    char note[128];
    std::snprintf(note, sizeof note, "only %d runs: one takes %.0f ms", runs, per_run_s * 1e3);
    t.note = note;
  }
  auto timed_runs = [&] {
    for (int r = 0; r < runs; ++r) {
      poison(out);
      starts[r].record(stream);
      launch();
      stops[r].record(stream);
    }
    stream.synchronize();
    t.us.clear();
    for (int r = 0; r < runs; ++r) t.us.push_back(stops[r].elapsed_since(starts[r]) * 1e3);
    t.median_us = median_of(t.us);
    t.min_us = *std::min_element(t.us.begin(), t.us.end());
    warmup_log("timed, median", t.median_us * 1e-6, runs);
  };
  timed_runs();
  // A GPU that was slow for a part of the runs (an H100 under NVIDIA's Vulkan driver, twenty-
  // seventh session: 78 runs at 120 us, then 22 at 52 us, median 119.4 us) gives a median far
  // from its fastest run: it is warmed up again and timed once more, and the row says so.
  if (is_gpu() && t.median_us > kSpreadRetime * t.min_us) {
    char note[160];
    std::snprintf(note, sizeof note,
                  "timed twice: the first %d runs' median %.1f us was %.2fx their fastest", runs,
                  t.median_us, t.median_us / t.min_us);
    warm_up();
    timed_runs();
    t.note += (t.note.empty() ? "" : "; ") + std::string(note);
  }
  return t;
}

Row Bench::measure(Row row, const std::function<void()>& launch, const BufferBase& out,
                   const std::string& peak_key) {
  row.status = row.max_err <= row.tolerance ? "pass" : "fail";
  if (row.status == "pass") {
    Timing t = time(launch, out);
    row.runs = static_cast<int>(t.us.size());
    row.median_us = t.median_us;
    row.min_us = t.min_us;
    row.run_us = t.us;
    row.value = t.median_us;
    row.unit = "us";
    if (!t.note.empty()) row.detail += (row.detail.empty() ? "" : "; ") + t.note;
  }
  set_floor(row, peak_key);
  return row;
}

Row guarded(const Row& base, const std::function<Row()>& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    Row r = base;
    r.status = e.kind() == ErrorKind::Unsupported ? "skip" : "error";
    r.detail = std::string(to_string(e.kind())) + ": " + e.what();
    return r;
  }
}

Row best_of(const std::vector<Row>& tried) {
  TESSERA_CHECK(!tried.empty(), "best_of: no rows");
  // A pass without a median was checked, not timed: it ranks below any timed pass. A skip shows
  // its reason up to the first ';' or line end (the device's limit, not the hint after it).
  auto timed = [](const Row* r) { return r->status == "pass" && !std::isnan(r->median_us); };
  const Row* best = nullptr;
  std::string list;
  for (const Row& r : tried) {
    char median[32];
    std::snprintf(median, sizeof median, "%.1f us", r.median_us);
    std::string line =
        r.config + ": " +
        (timed(&r)            ? median
         : r.status == "pass" ? "pass, not timed"
         : r.status == "skip" ? "skip (" + r.detail.substr(0, r.detail.find_first_of(";\n")) + ")"
                              : r.status);
    list += (list.empty() ? "" : "; ") + line;
    bool bad = r.status == "fail" || r.status == "error";
    if (bad && (!best || best->status == "pass" || best->status == "skip")) best = &r;
    if (r.status == "pass" &&
        (!best || best->status == "skip" || (!timed(best) && best->status == "pass" && timed(&r)) ||
         (timed(best) && timed(&r) && r.median_us < best->median_us)))
      best = &r;
    if (!best) best = &r;
  }
  Row out = *best;
  if (tried.size() > 1) out.detail += (out.detail.empty() ? "" : "; ") + ("configs: " + list);
  return out;
}

void Bench::set_floor(Row& row, const std::string& peak_key) const {
  char basis[96];
  auto peak = options_.peak_tflops.find(peak_key);
  if (row.flops > 0 && peak != options_.peak_tflops.end()) {
    double compute_us = row.flops / (peak->second * 1e12) * 1e6;
    double memory_us = copy_bps_ > 0 ? row.bytes / copy_bps_ * 1e6 : 0;
    row.floor_us = std::max(compute_us, memory_us);
    std::snprintf(basis, sizeof basis, "flops / peak %.0f TFLOP/s", peak->second);
    row.floor_basis = basis;
    return;
  }
  if (row.flops > 0) {
    row.floor_basis = "no peak given (--peak " + peak_key + "=TFLOPS)";
    return;
  }
  if (copy_bps_ <= 0 || row.bytes <= 0) return;
  row.floor_us = row.bytes / copy_bps_ * 1e6;
  std::snprintf(basis, sizeof basis, "bytes / copy %.3g TB/s", copy_bps_ / 1e12);
  row.floor_basis = basis;
}

void Bench::add(Row row) {
  print_row(row);
  rows_.push_back(std::move(row));
}

}  // namespace tessera::bench
