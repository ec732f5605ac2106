/// \file Autotuning: configurations checked against the kernel's parameters, the key, the search
/// (pruning, compiles on a thread pool, timed runs on scratch copies of the outputs with the L2
/// flushed), the in-memory and on-disk choices, the log and the progress line.
#include "runtime/autotune.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "core/ir/printer.h"
#include "core/support/error.h"
#include "runtime/artifact_cache.h"
#include "runtime/cache.h"
#include "runtime/hash.h"
#include "runtime/stream.h"

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

}  // namespace

int64_t Config::operator[](std::string_view name) const {
  for (const auto& [n, v] : params)
    if (n == name) return v;
  fail(ErrorKind::Argument, "autotune configuration '", label(), "' sets no parameter '", name,
       "'");
}

std::string Config::label() const {
  std::string s;
  for (const auto& [n, v] : params) s += n + "=" + std::to_string(v) + " ";
  return s + "num_warps=" + std::to_string(num_warps) +
         " num_stages=" + std::to_string(num_stages) +
         (maxnreg ? " maxnreg=" + std::to_string(maxnreg) : "");
}

const KernelArg& Meta::arg(std::string_view name) const {
  for (size_t i = 0; i < names_.size() && i < args_.size(); ++i)
    if (names_[i] == name) return args_[i];
  std::string list;
  for (size_t i = 0; i < names_.size(); ++i) list += (i ? ", " : "") + names_[i];
  fail(ErrorKind::Argument, "autotune: the kernel has no parameter '", name,
       "' (parameters: ", list, ")");
}

int64_t Meta::operator[](std::string_view name) const {
  const KernelArg& a = arg(name);
  if (a.kind == Kind::Buffer)
    fail(ErrorKind::Argument, "autotune: parameter '", name, "' is ", a.describe(),
         ", not a number");
  return a.kind == Kind::Float ? static_cast<int64_t>(a.f) : a.i;
}

double Meta::number(std::string_view name) const {
  const KernelArg& a = arg(name);
  return a.kind == Kind::Float ? a.f : static_cast<double>((*this)[name]);
}

std::string autotune_cache_dir() {
  return cache_dir("autotune");
}

Autotuner::Autotuner(const KernelBase& kernel, AutotuneOptions options)
    : kernel_(kernel), options_(std::move(options)) {
  const std::vector<std::string>& names = kernel_.param_names();
  const std::string who = "autotune of kernel '" + kernel_.name() + "'";
  auto index_of = [&](const std::string& name, const std::string& where) {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return i;
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
    fail(ErrorKind::Argument, who, ": ", where, " names '", name,
         "', which is not a parameter (parameters: ", list, ")");
  };
  if (options_.configs.empty()) fail(ErrorKind::Argument, who, ": no configurations");
  if (!options_.grid) fail(ErrorKind::Argument, who, ": no grid function (.grid)");
  std::set<std::string> first;
  for (size_t c = 0; c < options_.configs.size(); ++c) {
    const Config& cfg = options_.configs[c];
    const std::string where = "configuration " + std::to_string(c) + " (" + cfg.label() + ")";
    std::set<std::string> set;
    for (const auto& [n, v] : cfg.params) {
      index_of(n, where);
      if (!set.insert(n).second)
        fail(ErrorKind::Argument, who, ": ", where, " sets '", n, "' twice");
    }
    if (c == 0) first = set;
    if (set != first)
      fail(ErrorKind::Argument, who, ": ", where, " sets other parameters than configuration 0 (",
           options_.configs[0].label(), "); every configuration must set the same ones");
  }
  for (const std::string& n : first) tuned_.push_back(index_of(n, "configuration 0"));
  std::sort(tuned_.begin(), tuned_.end());
  auto is_tuned = [&](size_t i) { return std::binary_search(tuned_.begin(), tuned_.end(), i); };
  for (const std::string& n : options_.key) {
    size_t i = index_of(n, "the key");
    if (is_tuned(i))
      fail(ErrorKind::Argument, who, ": the key names '", n, "', which the configurations set");
    key_.push_back(i);
  }
  output_.assign(names.size(), options_.outputs.empty());
  for (const std::string& n : options_.outputs) {
    size_t i = index_of(n, ".outputs");
    if (is_tuned(i))
      fail(ErrorKind::Argument, who, ": .outputs names '", n, "', which the configurations set");
    output_[i] = true;
  }
}

std::vector<KernelArg> Autotuner::with_config(std::span<const KernelArg> args,
                                              const Config& c) const {
  const std::vector<std::string>& names = kernel_.param_names();
  const size_t n = names.size();
  if (args.size() != n && args.size() != n - tuned_.size()) {
    std::string list;
    for (size_t i = 0; i < n; ++i)
      if (!std::binary_search(tuned_.begin(), tuned_.end(), i))
        list += (list.empty() ? "" : ", ") + names[i];
    fail(ErrorKind::Argument, "autotuned kernel '", kernel_.name(), "' takes ", n - tuned_.size(),
         " arguments (", list, ") or all ", n, " with the tuned ones, got ", args.size());
  }
  std::vector<KernelArg> full;
  full.reserve(n);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::binary_search(tuned_.begin(), tuned_.end(), i)) {
      full.push_back(KernelArg::from(c[names[i]]));
      if (args.size() == n) ++next;
    } else {
      full.push_back(args[next++]);
    }
  }
  return full;
}

std::string Autotuner::key_of(std::span<const KernelArg> full) const {
  const std::vector<std::string>& names = kernel_.param_names();
  std::string key;
  auto value = [](const KernelArg& a) -> std::string {
    switch (a.kind) {
      case Kind::Buffer:
        return std::string(ir::dtype_name(a.dtype));
      case Kind::Float:
        return std::to_string(a.f);
      case Kind::DType:
        return std::string(ir::dtype_name(static_cast<ir::DType>(a.i)));
      case Kind::UInt:
        return std::to_string(static_cast<uint64_t>(a.i));
      default:
        return std::to_string(a.i);
    }
  };
  for (size_t i : key_) key += (key.empty() ? "" : " ") + names[i] + "=" + value(full[i]);
  for (size_t i = 0; i < full.size(); ++i)
    if (full[i].kind == Kind::Buffer)
      key += (key.empty() ? "" : " ") + names[i] + ":" + value(full[i]);
  return key;
}

void Autotuner::launch(std::span<const KernelArg> args) const {
  const Config& c = options_.configs[tune(args)];
  std::vector<KernelArg> full = with_config(args, c);
  LaunchOptions o;
  o.num_warps = c.num_warps;
  o.num_stages = c.num_stages;
  o.maxnreg = c.maxnreg;
  Grid grid = options_.grid(Meta(kernel_.param_names(), full));
  kernel_.launch(LaunchConfig(grid, o), full);
}

size_t Autotuner::tune(std::span<const KernelArg> args) const {
  const std::string key = key_of(with_config(args, options_.configs[0]));
  // In memory, choices are per device too (the disk key has the device's description).
  std::string memory_key = key;
  for (const KernelArg& a : args)
    if (a.kind == Kind::Buffer && a.buffer.valid()) {
      memory_key += " @" + std::to_string(reinterpret_cast<uintptr_t>(a.buffer.device()));
      break;
    }
  {
    std::lock_guard lock(mutex_);
    if (auto it = chosen_.find(memory_key); it != chosen_.end()) return it->second;
  }
  std::lock_guard searching(search_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (auto it = chosen_.find(memory_key); it != chosen_.end()) return it->second;
  }
  AutotuneReport report;
  report.key = key;
  const size_t chosen = search(args, report);
  std::lock_guard lock(mutex_);
  chosen_[memory_key] = chosen;
  last_ = std::move(report);
  return chosen;
}

size_t Autotuner::search_count() const {
  std::lock_guard lock(mutex_);
  return searches_;
}

AutotuneReport Autotuner::last_report() const {
  std::lock_guard lock(mutex_);
  return last_;
}

size_t Autotuner::search(std::span<const KernelArg> args, AutotuneReport& report) const {
  const std::vector<std::string>& names = kernel_.param_names();
  const std::vector<Config>& configs = options_.configs;
  const bool logging = log_on();
  std::shared_ptr<rt::DeviceImpl> device;
  for (const KernelArg& a : args)
    if (a.kind == Kind::Buffer && a.buffer.valid()) {
      device = a.buffer.device_handle();
      break;
    }
  if (!device)
    fail(ErrorKind::Argument, "autotuned kernel '", kernel_.name(),
         "': no buffer argument tells which device to tune on");
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
    LaunchOptions o;
    o.num_warps = configs[c].num_warps;
    o.num_stages = configs[c].num_stages;
    o.maxnreg = configs[c].maxnreg;
    t.launch = LaunchConfig(options_.grid(meta), o);
  }

  // The disk entry: everything that decides the choice, as one text, stored whole in the entry
  // and compared (the hash only names the file). The kernel is known by its traced tile IR for
  // the first configuration that traces.
  std::string disk_key;
  for (size_t c = 0; c < configs.size() && disk_key.empty(); ++c) {
    try {
      disk_key = ir::print(*kernel_.traced_for(trials[c].args));
    } catch (const Error&) {
      continue;
    }
  }
  std::string path;
  if (!disk_key.empty() && !autotune_cache_dir().empty()) {
    std::string head = std::string(kEntryMagic) + "compiler " + rt::compiler_identity() +
                       "\ndevice " + info.description + "\ntarget " + info.target + "\nkernel " +
                       kernel_.name() + "\nkey " + report.key + "\n";
    for (const Config& c : configs) head += "config " + c.label() + "\n";
    disk_key = head + "traced\n" + disk_key;
    path = autotune_cache_dir() + "/" + rt::hash128(disk_key).hex() + ".tune";
    report.cache_path = path;
    if (std::optional<std::string> bytes = read_cache_file(path)) {
      // checksum line, then the key, then "choice <index> <label>\n".
      std::string_view in(*bytes);
      const size_t eol = in.find('\n');
      if (eol == 32) {
        const std::string_view sum = in.substr(0, 32), body = in.substr(33);
        const std::string prefix = disk_key + "choice ";
        if (rt::hash128(body).hex() == sum && body.substr(0, prefix.size()) == prefix) {
          std::string_view rest = body.substr(prefix.size());
          size_t idx = 0, digits = 0;
          while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && digits < 9)
            idx = idx * 10 + static_cast<size_t>(rest[digits++] - '0');
          if (digits > 0 && idx < configs.size() && trials[idx].discarded.empty() &&
              rest.substr(digits) == " " + configs[idx].label() + "\n") {
            report.chosen = idx;
            report.from_disk = true;
            if (logging)
              std::fprintf(stderr, "tessera autotune: %s: %s (from %s)\n", what.c_str(),
                           configs[idx].label().c_str(), path.c_str());
            return idx;
          }
        }
      }
      if (logging)
        std::fprintf(stderr, "tessera autotune: %s: ignored the damaged or foreign entry %s\n",
                     what.c_str(), path.c_str());
    }
  }

  {
    std::lock_guard lock(mutex_);
    ++searches_;
  }
  std::vector<size_t> live;
  for (size_t c = 0; c < configs.size(); ++c)
    if (trials[c].discarded.empty()) live.push_back(c);
  Progress progress(what, live.size());

  // Compiles on a thread pool: a launch with an empty grid compiles (and caches) the kernel and
  // enqueues nothing. Kernel, tracer, pipeline, both targets and the backends' loads are safe
  // to run from several threads (KernelBase's caches under its mutex, the tracer's state
  // thread_local, LLVM objects per compile, CUDA loads under a context scope).
  {
    std::atomic<size_t> next{0}, done{0};
    std::mutex progress_mutex;
    auto worker = [&] {
      for (size_t i; (i = next++) < live.size();) {
        Trial& t = trials[live[i]];
        try {
          kernel_.launch(LaunchConfig(Grid(0), t.launch.options), t.args);
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
      errors[0] = std::current_exception();
    }
    for (std::thread& th : pool) th.join();
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }

  // Scratch copies of the written buffers, one per distinct buffer; every argument naming that
  // memory (an output also passed as an input) gets the copy.
  std::map<BufferId, std::pair<BufferBase, BufferBase>> scratch;  // id -> (user's, scratch)
  for (size_t i = 0; i < names.size(); ++i) {
    const KernelArg& a = trials[0].args[i];
    if (a.kind != Kind::Buffer || !output_[i]) continue;
    if (!scratch.count(id_of(a.buffer)))
      scratch.emplace(id_of(a.buffer),
                      std::make_pair(a.buffer, BufferBase::allocate(device, a.buffer.bytes(),
                                                                    a.buffer.dtype())));
  }
  for (Trial& t : trials) {
    t.scratch_args = t.args;
    for (KernelArg& a : t.scratch_args)
      if (a.kind == Kind::Buffer)
        if (auto it = scratch.find(id_of(a.buffer)); it != scratch.end())
          a.buffer = it->second.second;
  }
  const BufferBase flush =
      BufferBase::allocate(device, info.is_cpu ? kCpuFlushBytes : kGpuFlushBytes, ir::DType::i32);
  const uint32_t flush_word = 0;
  std::shared_ptr<rt::StreamImpl> stream_impl = device->default_stream();
  rt::adopt_stream(*device, stream_impl, true);
  const Stream stream(stream_impl);
  const int warmup = options_.warmup_runs > 0 ? options_.warmup_runs : info.is_cpu ? 1 : 3;
  const int timed_runs = options_.timed_runs > 0 ? options_.timed_runs : info.is_cpu ? 3 : 10;
  // Run counts left to the default run for a time as well on a GPU (AutotuneOptions).
  const bool time_bound_warmup = options_.warmup_runs <= 0 && !info.is_cpu;
  const bool time_bound_timed = options_.timed_runs <= 0 && !info.is_cpu;
  const double min_warmup_ms = options_.min_warmup_ms, min_timed_ms = options_.min_timed_ms;

  // One run: the outputs restored from the user's buffers, the L2 flushed, the launch.
  auto run = [&](const Trial& t, const Event* start, const Event* stop) {
    for (const auto& [id, pair] : scratch) pair.second.copy_bytes_from(pair.first, nullptr);
    flush.fill_bytes(&flush_word, sizeof flush_word, nullptr);
    if (start) start->record(stream);
    kernel_.launch(t.launch, t.scratch_args);
    if (stop) stop->record(stream);
  };
  size_t timed_count = 0;
  for (size_t i = 0; i < live.size(); ++i) {
    Trial& t = trials[live[i]];
    if (!t.discarded.empty()) {  // failed to compile
      progress.step("timed", ++timed_count);
      continue;
    }
    try {
      // The warm-up's own time estimates a run's (copies, flush, launch) for the time minimums.
      const Event warm_start(device, device->create_event()),
          warm_stop(device, device->create_event());
      warm_start.record(stream);
      for (int r = 0; r < warmup; ++r) run(t, nullptr, nullptr);
      warm_stop.record(stream);
      stream.synchronize();
      const double per_run_ms = std::max(warm_stop.elapsed_since(warm_start) / warmup, 1e-3);
      auto runs_for = [&](double ms, int at_least) {
        return std::max(at_least, static_cast<int>(std::min(std::ceil(ms / per_run_ms), 1000.0)));
      };
      if (time_bound_warmup) {
        const int more = runs_for(min_warmup_ms, warmup) - warmup;
        for (int r = 0; r < more; ++r) run(t, nullptr, nullptr);
      }
      const int timed = time_bound_timed ? runs_for(min_timed_ms, timed_runs) : timed_runs;
      std::vector<Event> starts, stops;
      for (int r = 0; r < timed; ++r) {
        starts.emplace_back(device, device->create_event());
        stops.emplace_back(device, device->create_event());
      }
      for (int r = 0; r < timed; ++r) run(t, &starts[r], &stops[r]);
      stream.synchronize();
      std::vector<double> ms;
      for (int r = 0; r < timed; ++r) ms.push_back(stops[r].elapsed_since(starts[r]));
      t.median_ms = median_of(ms);
      t.timed_runs = timed;
    } catch (const Error& e) {
      if (!discardable(e.kind())) throw;
      t.discarded = std::string("failed when run: ") + e.what();
      t.why = e.kind();
    }
    progress.step("timed", ++timed_count);
  }

  size_t best = configs.size();
  for (size_t c = 0; c < configs.size(); ++c) {
    const Trial& t = trials[c];
    report.candidates.push_back(
        {configs[c], t.discarded.empty() ? t.median_ms : -1, t.discarded, t.timed_runs});
    if (t.discarded.empty() && (best == configs.size() || t.median_ms < trials[best].median_ms))
      best = c;
  }
  if (logging) {
    std::fprintf(stderr, "tessera autotune: %s: searching %zu configurations\n", what.c_str(),
                 configs.size());
    for (const AutotuneCandidate& c : report.candidates)
      if (c.discarded.empty())
        std::fprintf(stderr, "  %s: %.4f ms (median of %d)\n", c.config.label().c_str(),
                     c.median_ms, c.timed_runs);
      else
        std::fprintf(stderr, "  %s: discarded: %s\n", c.config.label().c_str(),
                     c.discarded.c_str());
  }
  if (best == configs.size()) {
    std::string list;
    std::set<ErrorKind> kinds;
    for (size_t c = 0; c < configs.size(); ++c) {
      list += "\n  " + configs[c].label() + ": " + trials[c].discarded;
      kinds.insert(trials[c].why);
    }
    fail(kinds.size() == 1 ? *kinds.begin() : ErrorKind::Unsupported, "autotuning kernel ", what,
         ": no configuration can run:", list);
  }
  report.chosen = best;
  if (logging)
    std::fprintf(stderr, "tessera autotune: %s: chose %s (%.4f ms)\n", what.c_str(),
                 configs[best].label().c_str(), trials[best].median_ms);
  if (!path.empty()) {
    const std::string body =
        disk_key + "choice " + std::to_string(best) + " " + configs[best].label() + "\n";
    std::string error;
    if (!write_cache_file(path, rt::hash128(body).hex() + "\n" + body, &error) && logging)
      std::fprintf(stderr, "tessera autotune: not saved: %s\n", error.c_str());
  }
  return best;
}

}  // namespace tessera
