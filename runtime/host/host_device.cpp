/// \file The host devices: the tile-IR interpreter ("host") and the SIMT interpreter at subgroup
/// sizes 8, 32 and 64 ("simt:8", "simt:32", "simt:64") behind the runtime API. The SIMT devices
/// run the same lowering as the GPU targets, so they test it without a GPU. Memory is host memory,
/// every access is checked against the live allocations, and each stream is a worker thread that
/// runs its work in order (so launches are asynchronous, as on a GPU).
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

#include "core/interp/interpreter.h"
#include "core/interp/simt.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "core/support/error.h"
#include "runtime/backend.h"
#include "runtime/timeout.h"

namespace tessera::rt {
namespace {

using Clock = std::chrono::steady_clock;

/// A deadline TESSERA_TIMEOUT from now, naming the setting in its message (none when it is 0).
interp::Deadline timeout_deadline() {
  return interp::Deadline::after(timeout_seconds(), "TESSERA_TIMEOUT");
}

/// The live allocations of the host device (its own and wrapped memory, which may overlap),
/// for the interpreter's bounds checks.
class LiveMemory : public interp::MemoryMap {
 public:
  void add(uint64_t base, uint64_t bytes) {
    std::unique_lock lock(mutex_);
    ranges_.emplace(base, bytes);
  }
  void remove(uint64_t base, uint64_t bytes) {
    std::unique_lock lock(mutex_);
    auto [begin, end] = ranges_.equal_range(base);
    for (auto it = begin; it != end; ++it) {
      if (it->second != bytes) continue;
      ranges_.erase(it);
      return;
    }
  }
  bool contains(uint64_t address, uint64_t bytes) const override {
    std::shared_lock lock(mutex_);
    if (address + bytes < address) return false;
    // The nearest range starting at or below `address` holds it, unless ranges overlap (wrapped
    // memory inside another range): then an earlier one may.
    for (auto it = ranges_.upper_bound(address); it != ranges_.begin();) {
      --it;
      if (address + bytes <= it->first + it->second) return true;
    }
    return false;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::multimap<uint64_t, uint64_t> ranges_;
};

/// Host memory: the device's own (`owned`, freed with it) or the caller's (Device::wrap; `keep`
/// is held until the allocation goes).
class HostAllocation : public Allocation {
 public:
  HostAllocation(DeviceImpl* device, void* ptr, size_t bytes, LiveMemory* live, bool owned,
                 std::shared_ptr<void> keep = nullptr)
      : Allocation(device, reinterpret_cast<uint64_t>(ptr), bytes),
        ptr_(ptr),
        live_(live),
        owned_(owned),
        keep_(std::move(keep)) {
    live_->add(address(), bytes);
  }
  ~HostAllocation() override {
    live_->remove(address(), bytes());
    if (owned_) std::free(ptr_);
  }

 private:
  void* ptr_;
  LiveMemory* live_;
  bool owned_;
  std::shared_ptr<void> keep_;
};

class HostKernel : public CompiledKernel {
 public:
  std::unique_ptr<ir::Module> module;  ///< tile IR, or SIMT IR on the SIMT devices
  bool simt = false;
};

/// An event: recorded (record() was called) and completed (its stream reached it) with the time.
class HostEvent : public EventImpl {
 public:
  /// Called by record(): the event now has a point to complete at.
  void begin_record() {
    std::lock_guard lock(mutex_);
    recorded_ = true;
    time_.reset();
  }
  void complete() {
    std::lock_guard lock(mutex_);
    time_ = Clock::now();
    cv_.notify_all();
  }
  bool recorded() const {
    std::lock_guard lock(mutex_);
    return recorded_;
  }
  /// Waits until the event completes: throws Argument if it was never recorded (it would never
  /// complete) and DeviceFault if it does not complete within TESSERA_TIMEOUT.
  Clock::time_point wait(const std::string& device, const char* call) const {
    interp::Deadline deadline = timeout_deadline();
    std::unique_lock lock(mutex_);
    if (!recorded_)
      fail(ErrorKind::Argument, device, ": ", call, " of an event that was never recorded");
    auto reached = [&] { return time_.has_value(); };
    if (deadline.none())
      cv_.wait(lock, reached);
    else if (!cv_.wait_until(lock, deadline.at, reached))
      fail(ErrorKind::DeviceFault, device, ": ", call,
           " timed out: the event was not reached within ", timeout_text(deadline.seconds),
           " (the work before it on its stream is still running)");
    return *time_;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool recorded_ = false;
  std::optional<Clock::time_point> time_;
};

/// A worker thread running tasks in order.
///
/// Errors, as docs/design.md ("Errors and streams") says: the first task that fails puts the
/// stream in error, and while it is, later tasks are skipped (event records still complete, so
/// no wait hangs). The error is owed to every thread whose task failed or was skipped, and each
/// synchronizing call (synchronize, download) throws a thread the error owed to it, so a thread
/// sharing the stream gets either its own work done or an error naming the faulting kernel,
/// never stale data. The first call that reports the stream's error takes the stream out of
/// error; threads still owed it get it at their next synchronizing call.
class HostStream : public StreamImpl {
 public:
  /// How much longer than TESSERA_TIMEOUT a wait allows one task (a kernel stops itself at the
  /// limit, checking the clock only now and then).
  static constexpr double kGraceSeconds = 1;

  HostStream(DeviceImpl* device, const LiveMemory* memory) : device_(device), memory_(memory) {
    worker_ = std::thread([this] { run(); });
  }
  ~HostStream() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
      cv_.notify_all();
    }
    worker_.join();
  }

  DeviceImpl* device() const override { return device_; }

  void launch(std::shared_ptr<const CompiledKernel> kernel, Grid grid,
              std::vector<std::byte> params,
              std::vector<std::shared_ptr<Allocation>> keep_alive) override {
    std::string what = "kernel '" + kernel->name + "'";
    enqueue(std::move(what),
            [this, kernel, grid, params = std::move(params), keep = std::move(keep_alive)] {
              const auto& k = static_cast<const HostKernel&>(*kernel);
              interp::Grid g{grid.x, grid.y, grid.z};
              // The limit counts from the kernel's start, not from its enqueueing.
              if (k.simt) {
                interp::SimtOptions o;
                o.deadline = timeout_deadline();
                interp::run_simt(k.module->kernel(), params, g, *memory_, o);
              } else {
                interp::RunOptions o;
                o.deadline = timeout_deadline();
                interp::run(k.module->kernel(), params, g, *memory_, o);
              }
            });
  }

  void upload(std::shared_ptr<Allocation> dst, size_t offset, const void* src,
              size_t bytes) override {
    // Staged at enqueue time, so the caller may reuse `src` at once.
    std::vector<std::byte> staged(bytes);
    std::memcpy(staged.data(), src, bytes);
    enqueue("upload", [dst, offset, staged = std::move(staged)] {
      std::memcpy(reinterpret_cast<void*>(dst->address() + offset), staged.data(), staged.size());
    });
  }

  void download(std::shared_ptr<Allocation> src, size_t offset, void* dst, size_t bytes) override {
    // Through a copy the task owns: a download that times out returns while the task may still
    // run, and `dst` is the caller's.
    auto staged = std::make_shared<std::vector<std::byte>>(bytes);
    uint64_t ticket = enqueue("download", [src, offset, staged] {
      std::memcpy(staged->data(), reinterpret_cast<const void*>(src->address() + offset),
                  staged->size());
    });
    finish(ticket, "download");
    std::memcpy(dst, staged->data(), bytes);
  }

  void fill(std::shared_ptr<Allocation> dst, size_t offset, size_t bytes, const void* pattern,
            size_t pattern_bytes) override {
    std::vector<std::byte> pat(pattern_bytes);
    std::memcpy(pat.data(), pattern, pattern_bytes);
    enqueue("fill", [dst, offset, bytes, pat = std::move(pat)] {
      auto* p = reinterpret_cast<std::byte*>(dst->address() + offset);
      for (size_t i = 0; i + pat.size() <= bytes; i += pat.size())
        std::memcpy(p + i, pat.data(), pat.size());
    });
  }

  void copy(std::shared_ptr<Allocation> dst, size_t dst_offset, std::shared_ptr<Allocation> src,
            size_t src_offset, size_t bytes) override {
    enqueue("copy", [=] {
      std::memmove(reinterpret_cast<void*>(dst->address() + dst_offset),
                   reinterpret_cast<const void*>(src->address() + src_offset), bytes);
    });
  }

  void record(std::shared_ptr<EventImpl> event) override {
    auto e = std::static_pointer_cast<HostEvent>(event);
    e->begin_record();
    enqueue("event record", [e] { e->complete(); }, /*always=*/true);
  }

  void wait(std::shared_ptr<EventImpl> event) override {
    auto e = std::static_pointer_cast<HostEvent>(event);
    if (!e->recorded())
      fail(ErrorKind::Argument, device_->info().name,
           ": wait_in of an event that was never recorded");
    std::string device = device_->info().name;
    enqueue("event wait", [e, device] { e->wait(device, "wait_in"); }, /*always=*/true);
  }

  void synchronize() override {
    uint64_t ticket;
    {
      std::lock_guard lock(mutex_);
      ticket = enqueued_;
    }
    finish(ticket, "synchronize");
  }

 private:
  struct Task {
    std::string what;  // "kernel 'k'", "upload", ...: named by errors
    std::function<void()> fn;
    bool always;  // runs even while the stream is in error (events must still complete)
    std::thread::id owner;
  };

  /// Queues a task; returns its ticket (tasks are numbered from 1 in queue order).
  uint64_t enqueue(std::string what, std::function<void()> fn, bool always = false) {
    std::lock_guard lock(mutex_);
    queue_.push_back(Task{std::move(what), std::move(fn), always, std::this_thread::get_id()});
    cv_.notify_all();
    return ++enqueued_;
  }

  /// Waits until the tasks up to `ticket` are done (later tasks of other threads do not keep the
  /// caller waiting), then throws the calling thread the error owed to it. The wait ends with a
  /// DeviceFault when no task starts for TESSERA_TIMEOUT plus kGraceSeconds (the interpreters
  /// stop a kernel at the limit themselves, so this takes a task that cannot end).
  void finish(uint64_t ticket, const char* call) {
    const double seconds = timeout_seconds();
    // The running kernel stops itself at the limit; the wait allows it a second more to say so.
    const double patience = seconds > 0 ? seconds + kGraceSeconds : 0;
    std::unique_lock lock(mutex_);
    interp::Deadline deadline = interp::Deadline::after(patience);
    uint64_t seen = started_;
    while (done_ < ticket) {
      if (deadline.none()) {
        idle_cv_.wait(lock);
        continue;
      }
      if (idle_cv_.wait_until(lock, deadline.at) == std::cv_status::no_timeout ||
          started_ != seen) {
        if (started_ != seen) deadline = interp::Deadline::after(patience);  // progress
        seen = started_;
        continue;
      }
      fail(ErrorKind::DeviceFault, device_->info().name, ": ", call,
           " timed out: ", running_.empty() ? std::string("the stream's work") : running_,
           " did not finish within ", timeout_text(seconds), " and a grace of ", kGraceSeconds,
           " s; the stream's later work still waits for it");
    }
    auto it = owed_.find(std::this_thread::get_id());
    if (it == owed_.end()) return;
    std::exception_ptr e = it->second;
    owed_.erase(it);
    if (e == fault_) fault_ = nullptr;  // reported: the stream runs its work again
    std::rethrow_exception(e);
  }

  /// Runs the tasks in order. A task's function, and with it what it captured (the buffers it
  /// uses, and through a wrapped buffer its owner's release: an imported DLPack tensor's
  /// deleter), is destroyed before the task counts as done and outside the lock, so a
  /// synchronizing call that returns finds the stream holding none of it: dropping the caller's
  /// last handle then releases the memory at once, on the caller's thread.
  void run() {
    for (;;) {
      Task task;
      bool skipped = false;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
        ++started_;
        skipped = fault_ && !task.always;
        if (skipped)  // its thread is owed the stream's error
          owed_.try_emplace(task.owner, fault_);
        else
          running_ = task.what;
      }
      std::exception_ptr err;
      if (!skipped) {
        try {
          task.fn();
        } catch (...) {
          err = std::current_exception();
        }
      }
      task.fn = nullptr;
      std::lock_guard lock(mutex_);
      if (err) {
        if (!fault_) fault_ = err;
        owed_.try_emplace(task.owner, err);
      }
      running_.clear();
      ++done_;
      idle_cv_.notify_all();
    }
  }

  DeviceImpl* device_;
  const LiveMemory* memory_;
  std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Task> queue_;
  uint64_t enqueued_ = 0;  ///< tickets handed out
  uint64_t started_ = 0;   ///< tasks begun or skipped (progress, for the waits' time limit)
  uint64_t done_ = 0;      ///< tasks finished or skipped (in ticket order)
  std::string running_;    ///< the task running now, for timeout messages
  bool stop_ = false;
  std::exception_ptr fault_;  ///< the stream's error: later tasks are skipped while it is set
  std::unordered_map<std::thread::id, std::exception_ptr> owed_;  ///< per thread, not yet thrown
  std::thread worker_;
};

/// The target description of a SIMT-interpreter device: a GPU-like workgroup of any subgroup
/// size with every capability the host has; at subgroup 32 also NVIDIA's tensor-core instructions
/// (mma.sync, cp.async, the CUDA profiles' matrix shapes), so the interpreter runs the lowering the
/// PTX target gets. simt:8 and simt:64 keep the FMA form.
target::Target simt_target(int subgroup) {
  target::Target t = *target::profile("host");
  t.name = "simt-" + std::to_string(subgroup);
  t.subgroup_size = subgroup;
  t.max_threads = 1024;
  t.max_shared_bytes = 49152;
  // NaN-propagating min/max as one instruction: PTX has it (max.NaN), SPIR-V does not; simt:8
  // and simt:64 lower reductions as a SPIR-V target would.
  t.set(target::Cap::NanMinMax, subgroup == 32);
  if (subgroup == 32) {
    t.set(target::Cap::MmaSync);
    t.set(target::Cap::CpAsync);
    t.matrix_shapes = target::profile("cuda-sm_80")->matrix_shapes;
  }
  return t;
}

/// A SIMT-interpreter device for a GPU profile: the profile's target, run by the interpreter
/// (named "simt-<profile>"), so that CI runs the lowering a GPU gets without the GPU.
target::Target simt_profile_target(std::string_view profile) {
  target::Target t = *target::profile(profile);
  t.name = "simt-" + std::string(profile);
  t.isa = "none";
  return t;
}

/// The machine's memory, which the interpreters' buffers take from (0 if unknown).
uint64_t system_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

/// The GPU profiles that have a SIMT device "simt:<profile>".
constexpr std::string_view kSimtProfiles[] = {"cuda-sm_90a", "vulkan-nvidia",
                                              "vulkan-nvidia-coopmat2"};

class HostDevice : public DeviceImpl {
 public:
  /// The SIMT interpreter running `profile`'s lowering (device "simt:<profile>").
  explicit HostDevice(std::string_view profile) : subgroup_(32) {
    target_ = simt_profile_target(profile);
    subgroup_ = target_.subgroup_size;
    info_.name = "simt:" + std::string(profile);
    info_.kind = "simt";
    info_.description = "SIMT interpreter with " + std::string(profile) + "'s lowering";
    info_.rank = -1;
    info_.target = target_.str();
    info_.is_cpu = true;
    // Not in debug mode: the profile's own lowering runs as on its GPU (TMA copies, warp
    // specialization, which debug mode's checked accesses replace), and the interpreter checks
    // every global access itself.
    info_.checks_bounds = false;
    info_.memory_bytes = system_memory_bytes();
  }

  /// subgroup == 0: the tile interpreter; otherwise the SIMT interpreter at that subgroup size.
  explicit HostDevice(int subgroup = 0) : subgroup_(subgroup) {
    if (subgroup == 0) {
      info_.name = "host";
      info_.kind = "host";
      info_.description = "Tessera host interpreter (the reference semantics)";
      target_ = *target::profile("host");
      info_.rank = 0;
    } else {
      info_.name = "simt:" + std::to_string(subgroup);
      info_.kind = "simt";
      info_.description = "SIMT interpreter, subgroup " + std::to_string(subgroup);
      target_ = simt_target(subgroup);
      info_.rank = -1;  // a test device: Device::best() never picks it
    }
    info_.target = target_.str();
    info_.is_cpu = true;
    info_.checks_bounds = true;
    info_.memory_bytes = system_memory_bytes();
  }

  const DeviceInfo& info() const override { return info_; }

  std::shared_ptr<Allocation> allocate(size_t bytes) override {
    size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) fail(ErrorKind::OutOfMemory, "host: cannot allocate ", bytes, " bytes");
    return std::make_shared<HostAllocation>(this, p, bytes, &memory_, true);
  }

  /// Host memory the caller owns: kernels may touch exactly [address, address + bytes).
  std::shared_ptr<Allocation> wrap(uint64_t address, size_t bytes,
                                   std::shared_ptr<void> keep) override {
    return std::make_shared<HostAllocation>(this, reinterpret_cast<void*>(address), bytes, &memory_,
                                            false, std::move(keep));
  }

  std::shared_ptr<const CompiledKernel> compile(const ir::Module& module,
                                                const LaunchOptions& options) override {
    auto k = std::make_shared<HostKernel>();
    k->simt = subgroup_ != 0;
    // A profile with VK_NV_cooperative_matrix2 (simt:vulkan-nvidia-coopmat2) runs with the
    // coopmat2 option on, so that CI's conformance run takes the workgroup-scope dot plan
    // wherever it applies (a launcher on the GPU asks for it: the bench's descriptor rows).
    LaunchOptions o = options;
    if (target_.has(target::Cap::CooperativeMatrix2)) o.coopmat2 = true;
    passes::Compiled c =
        passes::compile(module, target_, o, k->simt ? passes::Stage::Simt : passes::Stage::Tile);
    k->module = k->simt ? std::move(c.simt) : std::move(c.tile);
    k->name = k->module->kernel().name;
    interp::check_interpretable(k->module->kernel(), info_.name);
    k->params = ir::param_layout(k->module->kernel());
    return k;
  }

  std::shared_ptr<StreamImpl> default_stream() override {
    std::lock_guard lock(mutex_);
    if (!default_stream_) default_stream_ = make_stream();
    return default_stream_;
  }

  std::shared_ptr<StreamImpl> create_stream() override {
    std::lock_guard lock(mutex_);
    return make_stream();
  }

  std::shared_ptr<EventImpl> create_event() override { return std::make_shared<HostEvent>(); }

  double elapsed_ms(const EventImpl& start, const EventImpl& end) override {
    auto& s = static_cast<const HostEvent&>(start);
    auto& e = static_cast<const HostEvent&>(end);
    if (!s.recorded() || !e.recorded())
      fail(ErrorKind::Argument, info_.name, ": elapsed_since of an event that was never recorded (",
           s.recorded() ? "the end event" : "the start event", ")");
    auto t0 = s.wait(info_.name, "elapsed_since");
    auto t1 = e.wait(info_.name, "elapsed_since");
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

  /// Waits for every stream; throws the first error owed to the caller after all have finished.
  void synchronize() override {
    std::vector<std::shared_ptr<HostStream>> streams;
    {
      std::lock_guard lock(mutex_);
      for (auto& w : streams_)
        if (auto s = w.lock()) streams.push_back(s);
    }
    std::exception_ptr first;
    for (auto& s : streams) {
      try {
        s->synchronize();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

 private:
  std::shared_ptr<HostStream> make_stream() {
    auto s = std::make_shared<HostStream>(this, &memory_);
    streams_.push_back(s);
    return s;
  }

  int subgroup_;
  target::Target target_;
  DeviceInfo info_;
  LiveMemory memory_;
  std::mutex mutex_;
  std::shared_ptr<StreamImpl> default_stream_;
  std::vector<std::weak_ptr<HostStream>> streams_;
};

}  // namespace

DriverReport enumerate_host() {
  DriverReport r;
  r.kind = "host";
  r.devices.push_back(std::make_shared<HostDevice>());
  for (int subgroup : {8, 32, 64}) r.devices.push_back(std::make_shared<HostDevice>(subgroup));
  for (std::string_view p : kSimtProfiles) r.devices.push_back(std::make_shared<HostDevice>(p));
  return r;
}

}  // namespace tessera::rt
