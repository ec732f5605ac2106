/// \file What is not kernel time: compile time per kernel (tracing, lowering and emission, the
/// driver's part cold and cache-warm) and launch overhead (host time per launch, device time per
/// dependent dispatch).
///
/// The runtime exposes only "first launch" as a whole, so the driver's part (PTX JIT and module
/// load on CUDA, pipeline creation on Vulkan, SIMT lowering on the interpreters) is derived:
/// first launch - trace - emit - one steady run. "Cold" is the first launch with an empty disk
/// cache (bench_main points TESSERA_CACHE_DIR at a fresh folder and turns the drivers' own caches
/// off); "warm" is a fresh Kernel object in this process (its in-memory caches empty, as in a new
/// process) whose artifact the artifact cache holds (runtime/artifact_cache.h): it traces, reads
/// the entry and loads it (CUDA: the cubin from the cubin cache; Vulkan: the pipeline cache),
/// skipping the pipeline, lowering and emission. "Warm cache, new process" is the same first
/// launch in a child process (`tessera bench --first-launch-child`) sharing the cache folder: its
/// device is open and its buffers made before the clock starts.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "bench/harness.h"
#include "bench/kernels.h"
#include "core/target/target.h"
#include "runtime/artifact_cache.h"
#include "runtime/launch_floor.h"
#include "samples/kernels/gelu.h"
#include "samples/kernels/softmax.h"
#include "targets/compile.h"

namespace tessera::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median3(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// One kernel whose compile time is measured: how to make a fresh Kernel object, its arguments
/// (small buffers), grid and options.
struct Probe {
  std::string name;
  std::function<std::unique_ptr<KernelBase>()> make;
  std::vector<KernelArg> args;
  Grid grid;
  LaunchOptions options;
};

Row compile_row(const std::string& probe, const std::string& what, double ms,
                const std::string& detail) {
  Row r;
  r.workload = "compile " + probe + ": " + what;
  r.kernel = probe;
  r.kind = "compile";
  r.value = ms;
  r.unit = "ms";
  r.detail = detail;
  return r;
}

/// Runs `tessera bench --first-launch-child DEVICE PROBE` and reads its time; nullopt (with a
/// note on stderr) when the child cannot run or says nothing.
std::optional<double> child_first_launch(const std::string& device, const std::string& probe) {
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return std::nullopt;
  self[len] = '\0';
  const std::string command = "'" + std::string(self) + "' bench --first-launch-child '" + device +
                              "' '" + probe + "' 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return std::nullopt;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  const int status = pclose(pipe);
  double ms = 0;
  const size_t at = out.find("first_launch_ms ");
  if (status != 0 || at == std::string::npos ||
      std::sscanf(out.c_str() + at, "first_launch_ms %lf", &ms) != 1) {
    std::fprintf(stderr, "tessera bench: the first-launch child for %s failed: %s\n", probe.c_str(),
                 out.c_str());
    return std::nullopt;
  }
  return ms;
}

void run_probe(Bench& b, const Probe& p) {
  const Device& dev = b.device();
  const std::string kind = dev.info().kind;
  const bool gpu_target = kind == "cuda" || kind == "vulkan";
  const LaunchConfig config(p.grid, p.options);
  auto first_launch = [&](const KernelBase& k) {
    Clock::time_point t0 = Clock::now();
    k.launch(config, p.args);
    dev.synchronize();
    return ms_since(t0);
  };
  std::vector<double> trace, trace_only, emit, lookup, warm, steady;
  std::shared_ptr<const ir::Module> traced;
  for (int i = 0; i < 3; ++i) {
    std::unique_ptr<KernelBase> k = p.make();
    Clock::time_point t0 = Clock::now();
    traced = k->traced_for(p.args);
    trace_only.push_back(ms_since(t0));
    t0 = Clock::now();
    k->ir_for(p.args);
    trace.push_back(trace_only.back() + ms_since(t0));
  }
  std::string isa = "no emitter (interpreted)";
  if (gpu_target) {
    std::string error;
    std::optional<target::Target> target = target::parse_target(dev.info().target, &error);
    if (!target) fail(ErrorKind::Internal, "cannot parse the device's target: ", error);
    for (int i = 0; i < 3; ++i) {
      Clock::time_point t0 = Clock::now();
      // The whole compile a launch runs: the tile passes again (a small part), lowering, emission.
      target::Artifact a = targets::compile(*traced, *target, p.options);
      emit.push_back(ms_since(t0));
      isa = a.isa == "ptx" ? "PTX" : "SPIR-V";
    }
  }
  std::unique_ptr<KernelBase> cold_kernel = p.make();
  const double cold = first_launch(*cold_kernel);
  for (int i = 0; i < 5; ++i) steady.push_back(first_launch(*cold_kernel));
  for (int i = 0; i < 3; ++i) warm.push_back(first_launch(*p.make()));
  if (gpu_target) {
    // What a warm launch adds to the trace before the driver: the key (the IR printed) and the
    // entry read and checked. The launch's options are the probe's (no debug on GPUs).
    for (int i = 0; i < 3; ++i) {
      Clock::time_point t0 = Clock::now();
      const std::string key = rt::artifact_key(*traced, dev.info().target, p.options);
      if (!rt::artifact_read(key)) fail(ErrorKind::Internal, p.name, ": no artifact cache entry");
      lookup.push_back(ms_since(t0));
    }
  }
  // A new process's first launch: this program again, in the same cache folder (inherited).
  std::vector<double> fresh;
  for (int i = 0; i < 3; ++i)
    if (std::optional<double> ms = child_first_launch(dev.info().name, p.name))
      fresh.push_back(*ms);
  const double t_trace = median3(trace), t_emit = emit.empty() ? 0 : median3(emit);
  const double t_run = median3(steady), t_warm = median3(warm);
  const double t_trace_only = median3(trace_only), t_lookup = lookup.empty() ? 0 : median3(lookup);
  const char* driver = kind == "cuda"     ? "PTX JIT + module load"
                       : kind == "vulkan" ? "pipeline creation"
                                          : "SIMT lowering";
  b.add(compile_row(p.name, "trace+optimize", t_trace, "tile IR, median of 3"));
  if (gpu_target) b.add(compile_row(p.name, "lower+emit", t_emit, isa + ", median of 3"));
  b.add(compile_row(p.name, "first launch, cold cache", cold, "one sample; includes one run"));
  b.add(compile_row(p.name, "first launch, warm cache", t_warm,
                    gpu_target ? "fresh Kernel in this process: trace, artifact cache, load, one "
                                 "run; median of 3"
                               : "fresh Kernel in this process, one run; median of 3"));
  if (fresh.size() == 3)
    b.add(compile_row(p.name, "first launch, warm cache, new process", median3(fresh),
                      gpu_target ? "a child process: device open and buffers made first, then "
                                   "trace, artifact cache, load, one run; median of 3"
                                 : "a child process: device open and buffers made first, then "
                                   "trace, compile, one run; median of 3"));
  if (kind == "host") return;  // the host interpreter runs the tile IR: no device compile
  b.add(compile_row(p.name, "driver, cold (derived)", cold - t_trace - t_emit - t_run,
                    std::string(driver) + ": cold - trace - emit - run"));
  if (!gpu_target) return;
  b.add(compile_row(p.name, "trace", t_trace_only, "tile IR as traced, median of 3"));
  b.add(compile_row(p.name, "artifact cache key+read", t_lookup,
                    "IR printed, entry read and checked; median of 3"));
  b.add(compile_row(p.name, "driver, warm (derived)", t_warm - t_trace_only - t_lookup - t_run,
                    std::string(driver) + " from cache: warm - trace - key+read - run"));
}

Probe gelu_probe(const Device& dev) {
  const int n = 4096;
  auto x = dev.alloc<float>(n), y = dev.alloc<float>(n);
  x.fill(1.0f);
  Probe p{"gelu",
          [] {
            return std::unique_ptr<KernelBase>(
                new Kernel(samples::gelu_kernel, "gelu_kernel", "x_ptr, y_ptr, n, BLOCK"));
          },
          {KernelArg::from(x), KernelArg::from(y), KernelArg::from(n), KernelArg::from(1024)},
          Grid(n / 1024),
          LaunchOptions{.num_warps = 4}};
  return p;
}

Probe softmax_probe(const Device& dev) {
  const int m = 16, n = 1024;
  auto x = dev.alloc<float>(m * n), y = dev.alloc<float>(m * n);
  x.fill(1.0f);
  Probe p{"softmax",
          [] {
            return std::unique_ptr<KernelBase>(
                new Kernel(samples::softmax_kernel, "softmax_kernel",
                           "x_ptr, y_ptr, x_row_stride, y_row_stride, num_cols, BLOCK_SIZE"));
          },
          {KernelArg::from(x), KernelArg::from(y), KernelArg::from(n), KernelArg::from(n),
           KernelArg::from(n), KernelArg::from(1024)},
          Grid(m),
          LaunchOptions{.num_warps = 4}};
  return p;
}

Probe matmul_probe(const Device& dev) {
  const int s = 128;
  auto a = dev.alloc<half>(s * s), bm = dev.alloc<half>(s * s);
  auto c = dev.alloc<half>(s * s);
  a.fill(half(0.5f));
  bm.fill(half(0.5f));
  std::vector<KernelArg> args = {KernelArg::from(a), KernelArg::from(bm), KernelArg::from(c)};
  for (int v : {s, s, s, s, 1, s, 1, s, 1, 64, 64, 32}) args.push_back(KernelArg::from(v));
  Probe p{"matmul_relu fp16",
          [] {
            return std::unique_ptr<KernelBase>(new Kernel(
                matmul_relu_kernel, "matmul_relu_kernel",
                "a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, "
                "stride_cm, stride_cn, BLOCK_M, BLOCK_N, BLOCK_K"));
          },
          args, Grid(s / 64, s / 64), LaunchOptions{.num_warps = 4, .num_stages = 3}};
  return p;
}

/// The compile probes by name, for bench_main and for the child process of a warm first launch.
constexpr struct {
  const char* name;
  Probe (*make)(const Device&);
} kProbes[] = {
    {"gelu", gelu_probe},
    {"softmax", softmax_probe},
    {"matmul_relu fp16", matmul_probe},
};

}  // namespace

/// `probes` is one probe's name, or several joined by '+' (a diagnosis: the later probes' first
/// launches show what the process's first launch of any kernel paid once). Each prints its first
/// launch's time, split into the enqueue (trace, artifact cache, load, record, submit) and the
/// wait.
int first_launch_child(const std::string& device, const std::string& probes) {
  const Device dev = Device::open(device);
  std::vector<Probe> ps;
  for (size_t at = 0; at <= probes.size();) {
    size_t end = probes.find('+', at);
    if (end == std::string::npos) end = probes.size();
    const std::string name = probes.substr(at, end - at);
    at = end + 1;
    const auto* entry = std::find_if(std::begin(kProbes), std::end(kProbes),
                                     [&](const auto& e) { return name == e.name; });
    if (entry == std::end(kProbes)) {
      std::fprintf(stderr, "tessera bench: no compile probe '%s'\n", name.c_str());
      return 2;
    }
    ps.push_back(entry->make(dev));
  }
  dev.synchronize();  // the buffers' fills are done before the clock starts
  for (const Probe& p : ps) {
    std::unique_ptr<KernelBase> k = p.make();
    const Clock::time_point t0 = Clock::now();
    k->launch(LaunchConfig(p.grid, p.options), p.args);
    const double enqueue = ms_since(t0);
    dev.synchronize();
    std::printf("first_launch_ms %.6f enqueue_ms %.6f probe %s\n", ms_since(t0), enqueue,
                p.name.c_str());
  }
  return 0;
}

namespace {

void run_compile_gelu(Bench& b) {
  run_probe(b, gelu_probe(b.device()));
}
void run_compile_softmax(Bench& b) {
  run_probe(b, softmax_probe(b.device()));
}
void run_compile_matmul(Bench& b) {
  run_probe(b, matmul_probe(b.device()));
}

Row launch_row(const std::string& what, double value, const std::string& unit, double err,
               const std::string& detail) {
  Row r;
  r.workload = what;
  r.kernel = "tiny";
  r.kind = "launch";
  r.value = value;
  r.unit = unit;
  r.max_err = err;
  r.status = err == 0 ? "pass" : "fail";
  r.detail = detail;
  return r;
}

/// A stream that forwards all work to `inner` except kernel launches, which it drops: launching
/// on it runs Tessera's whole launch path (argument checks, specialization key, cache lookup,
/// parameter packing, stream order) up to the backend's enqueue, and nothing after it. Only the
/// bench uses it, to measure Tessera's own host cost per launch on any device.
class DroppingStream final : public rt::StreamImpl {
 public:
  explicit DroppingStream(std::shared_ptr<rt::StreamImpl> inner) : inner_(std::move(inner)) {}
  rt::DeviceImpl* device() const override { return inner_->device(); }
  void launch(std::shared_ptr<const rt::CompiledKernel>, Grid, std::vector<std::byte>,
              std::vector<std::shared_ptr<rt::Allocation>>) override {}
  void launch_packed(const std::shared_ptr<const rt::CompiledKernel>&, Grid,
                     std::span<const std::byte>,
                     std::span<std::shared_ptr<rt::Allocation>>) override {}
  void upload(std::shared_ptr<rt::Allocation> dst, size_t offset, const void* src,
              size_t bytes) override {
    inner_->upload(std::move(dst), offset, src, bytes);
  }
  void download(std::shared_ptr<rt::Allocation> src, size_t offset, void* dst,
                size_t bytes) override {
    inner_->download(std::move(src), offset, dst, bytes);
  }
  void fill(std::shared_ptr<rt::Allocation> dst, size_t offset, size_t bytes, const void* pattern,
            size_t pattern_bytes) override {
    inner_->fill(std::move(dst), offset, bytes, pattern, pattern_bytes);
  }
  void copy(std::shared_ptr<rt::Allocation> dst, size_t dst_offset,
            std::shared_ptr<rt::Allocation> src, size_t src_offset, size_t bytes) override {
    inner_->copy(std::move(dst), dst_offset, std::move(src), src_offset, bytes);
  }
  void record(std::shared_ptr<rt::EventImpl> event) override { inner_->record(std::move(event)); }
  void wait(std::shared_ptr<rt::EventImpl> event) override { inner_->wait(std::move(event)); }
  void synchronize() override { inner_->synchronize(); }

 private:
  std::shared_ptr<rt::StreamImpl> inner_;
};

/// Tessera's own host cost per launch: the launch path with the backend's enqueue dropped
/// (DroppingStream), 100,000 launches (small: 5,000) three times, median.
double host_path_us(const Device& dev, const Buffer<float>& x, int block, bool small) {
  auto tiny = TESSERA_KERNEL(tiny_kernel, x_ptr, BLOCK);
  Stream s(std::make_shared<DroppingStream>(dev.create_stream().impl()));
  const LaunchConfig config(Grid(1), LaunchOptions{.num_warps = 1}, &s);
  const int launches = small ? 5000 : 100000;
  for (int i = 0; i < 1000; ++i) tiny[config](x, block);
  std::vector<double> us;
  for (int rep = 0; rep < 3; ++rep) {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < launches; ++i) tiny[config](x, block);
    us.push_back(ms_since(t0) * 1e3 / launches);
  }
  return median3(us);
}

/// 10,000 launches (small: 500) of a one-program kernel that adds 1 to 128 floats, three times;
/// 30 bursts of 64 launches, each burst after a synchronize; then 1,000 dependent launches
/// between two events. The buffer must end at the launch count.
void run_launch(Bench& b) {
  const Device& dev = b.device();
  const int block = 128, launches = b.small() ? 500 : 10000, dependent = b.small() ? 100 : 1000;
  auto x = dev.alloc<float>(block);
  x.fill(0.0f);
  auto tiny = TESSERA_KERNEL(tiny_kernel, x_ptr, BLOCK);
  auto launch = [&] { tiny[{Grid(1), LaunchOptions{.num_warps = 1}}](x, block); };
  int total = 0;
  for (int i = 0; i < 100; ++i, ++total) launch();
  dev.synchronize();
  std::vector<double> enqueue, with_sync;
  for (int rep = 0; rep < 3; ++rep) {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < launches; ++i, ++total) launch();
    enqueue.push_back(ms_since(t0) * 1e3 / launches);
    dev.synchronize();
    with_sync.push_back(ms_since(t0) * 1e3 / launches);
  }
  // Short bursts, each from an idle device: the driver's queue never fills, so the time is the
  // host's alone (10,000 back-to-back launches also wait whenever the device falls behind).
  const int burst = 64;
  std::vector<double> bursts;
  for (int rep = 0; rep < 30; ++rep) {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < burst; ++i, ++total) launch();
    bursts.push_back(ms_since(t0) * 1e3 / burst);
    dev.synchronize();
  }
  std::sort(bursts.begin(), bursts.end());
  Stream s = dev.default_stream();
  Event start = dev.create_event(), stop = dev.create_event();
  start.record(s);
  for (int i = 0; i < dependent; ++i, ++total) launch();
  stop.record(s);
  s.synchronize();
  const double device_us = stop.elapsed_since(start) * 1e3 / dependent;
  auto h = x.download();
  double err = 0;
  for (float v : h) err = std::max(err, std::fabs(double(v) - total));
  char n[64];
  std::snprintf(n, sizeof n, "%d launches, median of 3", launches);
  b.add(launch_row("launch: tiny kernel, host enqueue", median3(enqueue), "us/launch", err, n));
  b.add(
      launch_row("launch: tiny kernel, host incl. sync", median3(with_sync), "us/launch", err, n));
  std::snprintf(n, sizeof n, "%d launches from an idle device, median of 30", burst);
  b.add(launch_row("launch: tiny kernel, host enqueue, short bursts", bursts[bursts.size() / 2],
                   "us/launch", err, n));
  b.add(launch_row("launch: tiny kernel, Tessera's host path (backend enqueue dropped)",
                   host_path_us(dev, x, block, b.small()), "us/launch", err,
                   "checks, key, lookup, packing, stream order; the backend's launch dropped; "
                   "median of 3"));
  if (dev.info().kind == "cuda") {  // the driver's own cost, for comparison
    int ordinal = std::stoi(dev.info().name.substr(dev.info().name.find(':') + 1));
    if (std::optional<rt::LaunchFloor> f = rt::cuda_launch_floor(ordinal, burst, 30)) {
      std::snprintf(n, sizeof n, "empty kernel, %d launches from an idle device, median of 30",
                    burst);
      b.add(launch_row("launch floor: cuLaunchKernel, kernelParams", f->kernel_params_us,
                       "us/launch", 0, n));
      b.add(launch_row("launch floor: cuLaunchKernel, packed buffer", f->packed_us, "us/launch", 0,
                       n));
      b.add(launch_row("launch floor: cuLaunchKernel, packed, context push/pop",
                       f->packed_push_pop_us, "us/launch", 0, n));
    }
  }
  std::snprintf(n, sizeof n, "%d dependent launches between two events", dependent);
  b.add(launch_row("dispatch: dependent tiny kernels, device time", device_us, "us/dispatch", err,
                   n));
}

/// Graph replay: 64 launches of the tiny kernel captured on a stream (small: 16), the graph
/// replayed 200 times (small: 5) three times; host time per kernel replayed including the final
/// synchronize, and device time per kernel between two events. Dependent launches all add to one
/// buffer (each waits for the one before: on Vulkan a barrier between dispatches); independent
/// ones each add to their own (no barrier: what one submit of recorded dispatches costs). Every
/// buffer must end at the number of kernels run on it.
void run_graph_of(Bench& b, bool independent) {
  const Device& dev = b.device();
  const int block = 128, kernels = b.small() ? 16 : 64, replays = b.small() ? 5 : 200;
  std::vector<Buffer<float>> xs;
  for (int i = 0; i < (independent ? kernels : 1); ++i) {
    xs.push_back(dev.alloc<float>(block));
    xs.back().fill(0.0f);
  }
  auto tiny = TESSERA_KERNEL(tiny_kernel, x_ptr, BLOCK);
  Stream s = dev.create_stream();
  const LaunchConfig config(Grid(1), LaunchOptions{.num_warps = 1}, &s);
  for (const auto& x : xs) tiny[config](x, block);  // compiled before the capture
  int runs = 1;  // kernels run on each buffer of `xs` (dependent: divided among none)
  const int per_replay = independent ? 1 : kernels;
  Graph g = s.capture([&] {
    for (int i = 0; i < kernels; ++i) tiny[config](xs[independent ? i : 0], block);
  });
  for (int i = 0; i < 3; ++i, runs += per_replay) g.replay(s);  // warm
  s.synchronize();
  std::vector<double> with_sync;
  for (int rep = 0; rep < 3; ++rep) {
    Clock::time_point t0 = Clock::now();
    for (int i = 0; i < replays; ++i, runs += per_replay) g.replay(s);
    s.synchronize();
    with_sync.push_back(ms_since(t0) * 1e3 / (double(replays) * kernels));
  }
  Event start = dev.create_event(), stop = dev.create_event();
  start.record(s);
  for (int i = 0; i < replays; ++i, runs += per_replay) g.replay(s);
  stop.record(s);
  s.synchronize();
  const double device_us = stop.elapsed_since(start) * 1e3 / (double(replays) * kernels);
  double err = 0;
  for (const auto& x : xs)
    for (float v : x.download()) err = std::max(err, std::fabs(double(v) - runs));
  const char* kind = independent ? "independent" : "dependent";
  char n[112];
  std::snprintf(n, sizeof n, "%d replays of %d %s launches, median of 3", replays, kernels, kind);
  char what[80];
  std::snprintf(what, sizeof what, "graph replay: %d tiny kernels%s", kernels,
                independent ? ", independent" : "");
  b.add(
      launch_row(std::string(what) + ", host incl. sync", median3(with_sync), "us/kernel", err, n));
  std::snprintf(n, sizeof n, "%d replays of %d %s launches between two events", replays, kernels,
                kind);
  b.add(launch_row(std::string(what) + ", device time", device_us, "us/kernel", err, n));
}

void run_graph(Bench& b) {
  run_graph_of(b, false);
  run_graph_of(b, true);
}

}  // namespace

void add_compile_cases(std::vector<Case>& cases, bool) {
  cases.push_back({"compile gelu", run_compile_gelu});
  cases.push_back({"compile softmax", run_compile_softmax});
  cases.push_back({"compile matmul_relu fp16", run_compile_matmul});
}

void add_launch_cases(std::vector<Case>& cases, bool) {
  cases.push_back({"launch overhead", run_launch});
  cases.push_back({"graph replay", run_graph});
}

}  // namespace tessera::bench
