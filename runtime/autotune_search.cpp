/// \file The autotuner's search for one key value: the configurations pruned, the disk cache's
/// entry read (keyed by everything that decides the choice), the candidates compiled on a thread
/// pool and timed with device events on scratch copies of the outputs with the L2 flushed, the
/// log, the progress line and the choice stored.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "core/ir/printer.h"
#include "core/support/error.h"
#include "runtime/artifact_cache.h"
#include "runtime/autotune.h"
#include "runtime/cache.h"
#include "runtime/hash.h"
#include "runtime/stream.h"
#include "runtime/warmup.h"

namespace tessera {
namespace {

using Kind = KernelArg::Kind;

constexpr std::string_view kEntryMagic = "tessera-autotune 1\n";
/// The L2 flush before every run writes this much (as Triton's do_bench: 256 MB, over the H200's
/// 50 MB L2); a CPU device only exercises the path.
constexpr size_t kGpuFlushBytes = size_t{256} << 20;
constexpr size_t kCpuFlushBytes = size_t{64} << 10;
/// A search that has run this long shows a progress line on a terminal.
constexpr double kProgressAfterS = 1.0;

using Clock = std::chrono::steady_clock;

bool log_on() {
  const char* v = std::getenv("TESSERA_AUTOTUNE_LOG");
  return v && *v && std::string_view(v) != "0";
}

/// Errors that mean "this configuration cannot run here", so the search goes on without it;
/// the others (a device fault, an internal error) end the search.
bool discardable(ErrorKind k) {
  return k == ErrorKind::Unsupported || k == ErrorKind::OutOfMemory || k == ErrorKind::Argument ||
         k == ErrorKind::User || k == ErrorKind::Runtime;
}

/// A buffer's identity: arguments naming the same memory get the same scratch copy.
struct BufferId {
  const rt::Allocation* alloc;
  size_t offset, bytes;
  bool operator<(const BufferId& o) const {
    return std::tie(alloc, offset, bytes) < std::tie(o.alloc, o.offset, o.bytes);
  }
};
BufferId id_of(const BufferBase& b) {
  return {b.allocation().get(), b.offset(), b.bytes()};
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The progress line of a long search, on a terminal only (stderr a tty), erased at the end.
class Progress {
 public:
  Progress(std::string what, size_t total)
      : what_(std::move(what)),
        total_(total),
        tty_(::isatty(STDERR_FILENO) == 1),
        start_(Clock::now()) {}
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }
  void step(const char* phase, size_t done) {
    if (!tty_) return;
    if (std::chrono::duration<double>(Clock::now() - start_).count() < kProgressAfterS) return;
    shown_ = true;
    std::fprintf(stderr, "\r\033[Ktessera: autotuning %s: %s %zu/%zu", what_.c_str(), phase, done,
                 total_);
    std::fflush(stderr);
  }

 private:
  std::string what_;
  size_t total_;
  bool tty_;
  bool shown_ = false;
  Clock::time_point start_;
};

/// One candidate while searching.
struct Trial {
  std::vector<KernelArg> args;          ///< the user's arguments with the configuration's values
  std::vector<KernelArg> scratch_args;  ///< the same, the written buffers replaced by scratch
  LaunchConfig launch{Grid()};
  std::string discarded;  ///< why not timed, or ""
  ErrorKind why = ErrorKind::Unsupported;
  double median_ms = -1;
  int timed_runs = 0;
};

/// The device the arguments' buffers live on: the search runs there.
std::shared_ptr<rt::DeviceImpl> device_of(std::span<const KernelArg> args,
                                          const std::string& kernel) {
  for (const KernelArg& a : args)
    if (a.kind == Kind::Buffer && a.buffer.valid()) return a.buffer.device_handle();
  fail(ErrorKind::Argument, "autotuned kernel '", kernel,
       "': no buffer argument tells which device to tune on");
}

/// The disk entry's key: everything that decides the choice, as one text, stored whole in the
/// entry and compared (the hash only names the file). The kernel is known by its traced tile IR
/// for the first configuration that traces; "" when none does.
std::string disk_key_of(const KernelBase& kernel, const std::vector<Config>& configs,
                        const std::vector<Trial>& trials, const DeviceInfo& info,
                        const std::string& key) {
  std::string traced;
  for (size_t c = 0; c < configs.size() && traced.empty(); ++c) {
    try {
      traced = ir::print(*kernel.traced_for(trials[c].args));
    } catch (const Error&) {
      continue;
    }
  }
  if (traced.empty()) return "";
  std::string head = std::string(kEntryMagic) + "compiler " + rt::compiler_identity() +
                     "\ndevice " + info.description + "\ntarget " + info.target + "\nkernel " +
                     kernel.name() + "\nkey " + key + "\n";
  for (const Config& c : configs) head += "config " + c.label() + "\n";
  return head + "traced\n" + traced;
}

/// What the disk holds for a key: whether the entry's file exists, and the chosen index where
/// the entry is whole (its checksum line matches), is this key's and names a configuration that
/// was not pruned.
struct StoredChoice {
  bool exists = false;
  std::optional<size_t> index;
};
StoredChoice read_choice(const std::string& path, const std::string& disk_key,
                         const std::vector<Config>& configs, const std::vector<Trial>& trials) {
  std::optional<std::string> bytes = read_cache_file(path);
  if (!bytes) return {};
  // checksum line, then the key, then "choice <index> <label>\n".
  std::string_view in(*bytes);
  const size_t eol = in.find('\n');
  if (eol != 32) return {.exists = true};
  const std::string_view sum = in.substr(0, 32), body = in.substr(33);
  const std::string prefix = disk_key + "choice ";
  if (rt::hash128(body).hex() != sum || body.substr(0, prefix.size()) != prefix)
    return {.exists = true};
  std::string_view rest = body.substr(prefix.size());
  size_t idx = 0, digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && digits < 9)
    idx = idx * 10 + static_cast<size_t>(rest[digits++] - '0');
  if (digits > 0 && idx < configs.size() && trials[idx].discarded.empty() &&
      rest.substr(digits) == " " + configs[idx].label() + "\n")
    return {.exists = true, .index = idx};
  return {.exists = true};
}

/// Stores the choice for `disk_key` at `path` (a failure to write is logged, not an error).
void save_choice(const std::string& path, const std::string& disk_key, size_t best,
                 const Config& config, bool logging) {
  const std::string body =
      disk_key + "choice " + std::to_string(best) + " " + config.label() + "\n";
  std::string error;
  if (!write_cache_file(path, rt::hash128(body).hex() + "\n" + body, &error) && logging)
    std::fprintf(stderr, "tessera autotune: not saved: %s\n", error.c_str());
}

/// Compiles the trials `live` names on a thread pool: a launch with an empty grid compiles (and
/// caches) the kernel and enqueues nothing. Kernel, tracer, pipeline, both targets and the
/// backends' loads are safe to run from several threads (KernelBase's caches under its mutex, the
/// tracer's state thread_local, LLVM objects per compile, CUDA loads under a context scope). A
/// configuration that cannot be built here is discarded; any other error ends the search.
void compile_all(const KernelBase& kernel, std::vector<Trial>& trials,
                 const std::vector<size_t>& live, Progress& progress) {
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    for (size_t i; (i = next++) < live.size();) {
      Trial& t = trials[live[i]];
      try {
        kernel.launch(LaunchConfig(Grid(0), t.launch.options), t.args);
      } catch (const Error& e) {
        if (!discardable(e.kind())) throw;
        t.discarded = e.what();
        t.why = e.kind();
      }
      std::lock_guard lock(progress_mutex);
      progress.step("compiled", ++done);
    }
  };
  const size_t threads =
      std::min<size_t>(live.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(threads);
  for (size_t w = 1; w < threads; ++w)
    pool.emplace_back([&, w] {
      try {
        worker();
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  try {
    worker();
  } catch (...) {
    if (!errors.empty()) errors[0] = std::current_exception();
  }
  for (std::thread& th : pool) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

/// The device's default stream, adopted for the search's runs.
Stream default_stream_of(const std::shared_ptr<rt::DeviceImpl>& device) {
  std::shared_ptr<rt::StreamImpl> impl = device->default_stream();
  rt::adopt_stream(*device, impl, true);
  return Stream(impl);
}

/// Times trials on one device. Every run restores the written buffers' scratch copies from the
/// user's buffers, flushes the L2 and launches on the scratch arguments; a trial's warm-up runs
/// come first, then the median of timed runs between device events.
class Timer {
 public:
  /// Makes the scratch copies of the buffers `output` marks (one per distinct buffer: every
  /// argument naming that memory, an output also passed as an input, gets the copy) and gives
  /// every trial its scratch arguments.
  Timer(std::shared_ptr<rt::DeviceImpl> device, const AutotuneOptions& options,
        const std::vector<std::string>& names, const std::vector<bool>& output,
        std::vector<Trial>& trials)
      : device_(std::move(device)),
        flush_(BufferBase::allocate(
            device_, device_->info().is_cpu ? kCpuFlushBytes : kGpuFlushBytes, ir::DType::i32)),
        stream_(default_stream_of(device_)) {
    const bool cpu = device_->info().is_cpu;
    warmup_ = options.warmup_runs > 0 ? options.warmup_runs : cpu ? 1 : 3;
    timed_runs_ = options.timed_runs > 0 ? options.timed_runs : cpu ? 3 : 10;
    // Run counts left to the default run for a time as well on a GPU (AutotuneOptions).
    min_warmup_ms_ = options.warmup_runs <= 0 && !cpu ? options.min_warmup_ms : 0;
    min_timed_ms_ = options.timed_runs <= 0 && !cpu ? options.min_timed_ms : 0;
    for (size_t i = 0; i < names.size(); ++i) {
      const KernelArg& a = trials[0].args[i];
      if (a.kind != Kind::Buffer || !output[i] || scratch_.count(id_of(a.buffer))) continue;
      scratch_.emplace(id_of(a.buffer),
                       std::make_pair(a.buffer, BufferBase::allocate(device_, a.buffer.bytes(),
                                                                     a.buffer.dtype())));
    }
    for (Trial& t : trials) {
      t.scratch_args = t.args;
      for (KernelArg& a : t.scratch_args)
        if (a.kind == Kind::Buffer)
          if (auto it = scratch_.find(id_of(a.buffer)); it != scratch_.end())
            a.buffer = it->second.second;
    }
  }

  /// Sets `t`'s median_ms and timed_runs, or discards it when it cannot run here.
  void time(const KernelBase& kernel, Trial& t) {
    try {
      if (!device_warm_ && min_warmup_ms_ > 0) {
        warm_device(kernel, t);
        device_warm_ = true;
      }
      // The warm-up's own time estimates a run's (copies, flush, launch) for the time minimums.
      const Event warm_start = event(), warm_stop = event();
      warm_start.record(stream_);
      for (int r = 0; r < warmup_; ++r) run(kernel, t, nullptr, nullptr);
      warm_stop.record(stream_);
      stream_.synchronize();
      const double per_run_ms = std::max(warm_stop.elapsed_since(warm_start) / warmup_, 1e-3);
      auto runs_for = [&](double ms, int at_least) {
        return std::max(at_least, static_cast<int>(std::min(std::ceil(ms / per_run_ms), 1000.0)));
      };
      for (int r = runs_for(min_warmup_ms_, warmup_) - warmup_; r > 0; --r)
        run(kernel, t, nullptr, nullptr);
      const int timed = runs_for(min_timed_ms_, timed_runs_);
      std::vector<Event> starts, stops;
      for (int r = 0; r < timed; ++r) {
        starts.push_back(event());
        stops.push_back(event());
      }
      for (int r = 0; r < timed; ++r) run(kernel, t, &starts[r], &stops[r]);
      stream_.synchronize();
      std::vector<double> ms;
      for (int r = 0; r < timed; ++r) ms.push_back(stops[r].elapsed_since(starts[r]));
      t.median_ms = median_of(ms);
      t.timed_runs = timed;
    } catch (const Error& e) {
      if (!discardable(e.kind())) throw;
      t.discarded = std::string("failed when run: ") + e.what();
      t.why = e.kind();
    }
  }

 private:
  Event event() const { return Event(device_, device_->create_event()); }

  /// Before the first candidate on a GPU (run counts left to the defaults): its runs in windows
  /// of about 100 ms until the clocks have settled (runtime/warmup.h), so that the first
  /// candidates are not timed on the low clock steps an idle GPU climbs back up (NVIDIA's Vulkan
  /// driver takes about half a second).
  void warm_device(const KernelBase& kernel, const Trial& t) {
    auto run_batch = [&](int batch) {
      const Clock::time_point t0 = Clock::now();
      for (int r = 0; r < batch; ++r) run(kernel, t, nullptr, nullptr);
      stream_.synchronize();
      return std::chrono::duration<double>(Clock::now() - t0).count() / batch;
    };
    rt::warm_up(run_batch, 0.0, [](double, int) {});
  }

  /// One run: the outputs restored from the user's buffers, the L2 flushed, the launch.
  void run(const KernelBase& kernel, const Trial& t, const Event* start, const Event* stop) {
    for (const auto& [id, pair] : scratch_) pair.second.copy_bytes_from(pair.first, nullptr);
    const uint32_t flush_word = 0;
    flush_.fill_bytes(&flush_word, sizeof flush_word, nullptr);
    if (start) start->record(stream_);
    kernel.launch(t.launch, t.scratch_args);
    if (stop) stop->record(stream_);
  }

  std::shared_ptr<rt::DeviceImpl> device_;
  std::map<BufferId, std::pair<BufferBase, BufferBase>> scratch_;  ///< id -> (user's, scratch)
  BufferBase flush_;
  Stream stream_;
  int warmup_ = 1, timed_runs_ = 1;
  double min_warmup_ms_ = 0, min_timed_ms_ = 0;  ///< 0: the run counts alone
  bool device_warm_ = false;                     ///< warm_device has run (GPU defaults only)
};

/// The fastest trial's index (configs.size() when every one was discarded); every candidate
/// goes into `report`.
size_t fastest(const std::vector<Config>& configs, const std::vector<Trial>& trials,
               AutotuneReport& report) {
  size_t best = configs.size();
  for (size_t c = 0; c < configs.size(); ++c) {
    const Trial& t = trials[c];
    report.candidates.push_back(
        {configs[c], t.discarded.empty() ? t.median_ms : -1, t.discarded, t.timed_runs});
    if (t.discarded.empty() && (best == configs.size() || t.median_ms < trials[best].median_ms))
      best = c;
  }
  return best;
}

/// TESSERA_AUTOTUNE_LOG's lines of a search: each candidate's time or why it was discarded.
void log_candidates(const std::string& what, const AutotuneReport& report) {
  std::fprintf(stderr, "tessera autotune: %s: searching %zu configurations\n", what.c_str(),
               report.candidates.size());
  for (const AutotuneCandidate& c : report.candidates)
    if (c.discarded.empty())
      std::fprintf(stderr, "  %s: %.4f ms (median of %d)\n", c.config.label().c_str(), c.median_ms,
                   c.timed_runs);
    else
      std::fprintf(stderr, "  %s: discarded: %s\n", c.config.label().c_str(), c.discarded.c_str());
}

/// The error of a search where no configuration can run: each one's reason, and their kind
/// where all share one (Unsupported otherwise).
[[noreturn]] void fail_none_runs(const std::string& what, const std::vector<Config>& configs,
                                 const std::vector<Trial>& trials) {
  std::string list;
  std::set<ErrorKind> kinds;
  for (size_t c = 0; c < configs.size(); ++c) {
    list += "\n  " + configs[c].label() + ": " + trials[c].discarded;
    kinds.insert(trials[c].why);
  }
  fail(kinds.size() == 1 ? *kinds.begin() : ErrorKind::Unsupported, "autotuning kernel ", what,
       ": no configuration can run:", list);
}

}  // namespace

size_t Autotuner::search(std::span<const KernelArg> args, AutotuneReport& report) const {
  const std::vector<std::string>& names = kernel_.param_names();
  const std::vector<Config>& configs = options_.configs;
  const bool logging = log_on();
  const std::shared_ptr<rt::DeviceImpl> device = device_of(args, kernel_.name());
  const DeviceInfo& info = device->info();
  const std::string what = "'" + kernel_.name() + "' [" + report.key + "] on " + info.name;

  std::vector<Trial> trials(configs.size());
  for (size_t c = 0; c < configs.size(); ++c) {
    Trial& t = trials[c];
    t.args = with_config(args, configs[c]);
    const Meta meta(names, t.args);
    if (options_.prune) {
      if (std::string why = options_.prune(configs[c], meta); !why.empty()) {
        t.discarded = "pruned: " + why;
        t.why = ErrorKind::Argument;
        continue;
      }
    }
    t.launch = LaunchConfig(options_.grid(meta), configs[c].launch_options());
  }

  const std::string disk_key = disk_key_of(kernel_, configs, trials, info, report.key);
  const std::string dir = disk_key.empty() ? "" : autotune_cache_dir();
  const std::string path = dir.empty() ? "" : dir + "/" + rt::hash128(disk_key).hex() + ".tune";
  if (!path.empty()) {
    report.cache_path = path;
    const StoredChoice stored = read_choice(path, disk_key, configs, trials);
    if (stored.index) {
      report.chosen = *stored.index;
      report.from_disk = true;
      if (logging)
        std::fprintf(stderr, "tessera autotune: %s: %s (from %s)\n", what.c_str(),
                     configs[*stored.index].label().c_str(), path.c_str());
      return *stored.index;
    }
    if (stored.exists && logging)
      std::fprintf(stderr, "tessera autotune: %s: ignored the damaged or foreign entry %s\n",
                   what.c_str(), path.c_str());
  }

  {
    std::lock_guard lock(mutex_);
    ++searches_;
  }
  std::vector<size_t> live;
  for (size_t c = 0; c < configs.size(); ++c)
    if (trials[c].discarded.empty()) live.push_back(c);
  Progress progress(what, live.size());
  compile_all(kernel_, trials, live, progress);
  Timer timer(device, options_, names, output_, trials);
  size_t timed_count = 0;
  for (size_t c : live) {
    if (trials[c].discarded.empty()) timer.time(kernel_, trials[c]);  // else: failed to compile
    progress.step("timed", ++timed_count);
  }

  const size_t best = fastest(configs, trials, report);
  if (logging) log_candidates(what, report);
  if (best == configs.size()) fail_none_runs(what, configs, trials);
  report.chosen = best;
  if (logging)
    std::fprintf(stderr, "tessera autotune: %s: chose %s (%.4f ms)\n", what.c_str(),
                 configs[best].label().c_str(), trials[best].median_ms);
  if (!path.empty()) save_choice(path, disk_key, best, configs[best], logging);
  return best;
}

}  // namespace tessera
