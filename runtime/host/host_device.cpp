/// \file The host devices: the tile-IR interpreter ("host") and the SIMT interpreter at subgroup
/// sizes 8, 32 and 64 ("simt:8", "simt:32", "simt:64") behind the runtime API. The SIMT devices
/// run the same lowering as the GPU targets, so they test it without a GPU. Memory is host memory,
/// every access is checked against the live allocations, and each stream is a worker thread that
/// runs its work in order (so launches are asynchronous, as on a GPU).
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

#include "core/interp/interpreter.h"
#include "core/interp/simt.h"
#include "core/passes/pipeline.h"
#include "core/target/target.h"
#include "core/support/error.h"
#include "runtime/backend.h"

namespace tessera::rt {
namespace {

using Clock = std::chrono::steady_clock;

/// The live allocations of the host device, for the interpreter's bounds checks.
class LiveMemory : public interp::MemoryMap {
 public:
  void add(uint64_t base, uint64_t bytes) {
    std::unique_lock lock(mutex_);
    ranges_[base] = bytes;
  }
  void remove(uint64_t base) {
    std::unique_lock lock(mutex_);
    ranges_.erase(base);
  }
  bool contains(uint64_t address, uint64_t bytes) const override {
    std::shared_lock lock(mutex_);
    auto it = ranges_.upper_bound(address);
    if (it == ranges_.begin()) return false;
    --it;
    return address >= it->first && address + bytes <= it->first + it->second &&
           address + bytes >= address;
  }

 private:
  mutable std::shared_mutex mutex_;
  std::map<uint64_t, uint64_t> ranges_;
};

class HostAllocation : public Allocation {
 public:
  HostAllocation(DeviceImpl* device, void* ptr, size_t bytes, LiveMemory* live)
      : Allocation(device, reinterpret_cast<uint64_t>(ptr), bytes), ptr_(ptr), live_(live) {
    live_->add(address(), bytes);
  }
  ~HostAllocation() override {
    live_->remove(address());
    std::free(ptr_);
  }

 private:
  void* ptr_;
  LiveMemory* live_;
};

class HostKernel : public CompiledKernel {
 public:
  std::unique_ptr<ir::Module> module;  ///< tile IR, or SIMT IR on the SIMT devices
  bool simt = false;
};

class HostEvent : public EventImpl {
 public:
  void complete() {
    std::lock_guard lock(mutex_);
    time_ = Clock::now();
    cv_.notify_all();
  }
  Clock::time_point wait() const {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return time_.has_value(); });
    return *time_;
  }
  void reset() {
    std::lock_guard lock(mutex_);
    time_.reset();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::optional<Clock::time_point> time_;
};

/// A worker thread running tasks in order. The first error of its work is kept, later work is
/// dropped, and synchronize() rethrows it (then the stream is usable again).
class HostStream : public StreamImpl {
 public:
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

  void launch(std::shared_ptr<const CompiledKernel> kernel, Grid grid, std::vector<std::byte> params,
              std::vector<std::shared_ptr<Allocation>> keep_alive) override {
    enqueue([this, kernel, grid, params = std::move(params), keep = std::move(keep_alive)] {
      const auto& k = static_cast<const HostKernel&>(*kernel);
      interp::Grid g{grid.x, grid.y, grid.z};
      if (k.simt) interp::run_simt(k.module->kernel(), params, g, *memory_);
      else interp::run(k.module->kernel(), params, g, *memory_);
    });
  }

  void upload(std::shared_ptr<Allocation> dst, size_t offset, const void* src, size_t bytes) override {
    // Staged at enqueue time, so the caller may reuse `src` at once.
    std::vector<std::byte> staged(bytes);
    std::memcpy(staged.data(), src, bytes);
    enqueue([dst, offset, staged = std::move(staged)] {
      std::memcpy(reinterpret_cast<void*>(dst->address() + offset), staged.data(), staged.size());
    });
  }

  void download(std::shared_ptr<Allocation> src, size_t offset, void* dst, size_t bytes) override {
    enqueue([src, offset, dst, bytes] {
      std::memcpy(dst, reinterpret_cast<const void*>(src->address() + offset), bytes);
    });
    synchronize();
  }

  void fill(std::shared_ptr<Allocation> dst, size_t offset, size_t bytes, const void* pattern,
            size_t pattern_bytes) override {
    std::vector<std::byte> pat(pattern_bytes);
    std::memcpy(pat.data(), pattern, pattern_bytes);
    enqueue([dst, offset, bytes, pat = std::move(pat)] {
      auto* p = reinterpret_cast<std::byte*>(dst->address() + offset);
      for (size_t i = 0; i + pat.size() <= bytes; i += pat.size()) std::memcpy(p + i, pat.data(), pat.size());
    });
  }

  void copy(std::shared_ptr<Allocation> dst, size_t dst_offset, std::shared_ptr<Allocation> src,
            size_t src_offset, size_t bytes) override {
    enqueue([=] {
      std::memmove(reinterpret_cast<void*>(dst->address() + dst_offset),
                   reinterpret_cast<const void*>(src->address() + src_offset), bytes);
    });
  }

  void record(std::shared_ptr<EventImpl> event) override {
    auto e = std::static_pointer_cast<HostEvent>(event);
    e->reset();
    enqueue([e] { e->complete(); }, /*always=*/true);
  }

  void wait(std::shared_ptr<EventImpl> event) override {
    auto e = std::static_pointer_cast<HostEvent>(event);
    enqueue([e] { e->wait(); }, /*always=*/true);
  }

  void synchronize() override {
    std::unique_lock lock(mutex_);
    idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
    if (error_) {
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  struct Task {
    std::function<void()> fn;
    bool always;  // runs even after an error (events must still complete)
  };

  void enqueue(std::function<void()> fn, bool always = false) {
    std::lock_guard lock(mutex_);
    queue_.push_back(Task{std::move(fn), always});
    cv_.notify_all();
  }

  void run() {
    for (;;) {
      Task task;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
        if (error_ && !task.always) {
          if (queue_.empty()) idle_cv_.notify_all();
          continue;
        }
        busy_ = true;
      }
      std::exception_ptr err;
      try {
        task.fn();
      } catch (...) {
        err = std::current_exception();
      }
      std::lock_guard lock(mutex_);
      if (err && !error_) error_ = err;
      busy_ = false;
      if (queue_.empty()) idle_cv_.notify_all();
    }
  }

  DeviceImpl* device_;
  const LiveMemory* memory_;
  std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  std::deque<Task> queue_;
  bool busy_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
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

/// The GPU profiles that have a SIMT device "simt:<profile>".
constexpr std::string_view kSimtProfiles[] = {"cuda-sm_90a", "vulkan-nvidia"};

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
  }

  const DeviceInfo& info() const override { return info_; }

  std::shared_ptr<Allocation> allocate(size_t bytes) override {
    size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) fail(ErrorKind::OutOfMemory, "host: cannot allocate ", bytes, " bytes");
    return std::make_shared<HostAllocation>(this, p, bytes, &memory_);
  }

  std::shared_ptr<const CompiledKernel> compile(const ir::Module& module,
                                                const LaunchOptions& options) override {
    auto k = std::make_shared<HostKernel>();
    k->simt = subgroup_ != 0;
    passes::Compiled c =
        passes::compile(module, target_, options, k->simt ? passes::Stage::Simt : passes::Stage::Tile);
    k->module = k->simt ? std::move(c.simt) : std::move(c.tile);
    k->name = k->module->kernel().name;
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
    auto t0 = static_cast<const HostEvent&>(start).wait();
    auto t1 = static_cast<const HostEvent&>(end).wait();
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
  }

  void synchronize() override {
    std::vector<std::shared_ptr<HostStream>> streams;
    {
      std::lock_guard lock(mutex_);
      for (auto& w : streams_)
        if (auto s = w.lock()) streams.push_back(s);
    }
    for (auto& s : streams) s->synchronize();
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
