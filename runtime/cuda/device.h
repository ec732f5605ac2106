/// \file The CUDA device `cuda:N`: the device's primary context, memory (a caching allocator and a
/// pinned staging pool), PTX artifacts JIT-compiled and cached on disk, and recovery from device
/// faults. Streams and events are in stream.h.
///
/// Contexts come in generations: a sticky fault (illegal address, device assert, ...) ends one.
/// The device records why and drops its hold on the primary context (cuDevicePrimaryCtxRelease)
/// without resetting it: other libraries in the process (PyTorch, ...) may hold the same context
/// and their memory would go with a reset. If nobody else holds it, the driver discards it and
/// the next use makes a new one; otherwise it stays faulted, and the next use is a DeviceFault
/// that says to call Device::reset() (cuDevicePrimaryCtxReset). TESSERA_CUDA_RESET_ON_FAULT=1
/// resets at once, as Tessera did before. Work pending in the old context fails with
/// ErrorKind::DeviceFault naming the kernels, and buffers allocated in it are invalid (using one
/// is an error that says so). Drivers that keep the fault for the whole process (580 does: no
/// context can be made after an illegal address) leave the device unusable; every later use is
/// then a DeviceFault that says so.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "core/target/artifact.h"
#include "core/target/target.h"
#include "runtime/backend.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/tensor_map.h"
#include "targets/ptx/ptx.h"

namespace tessera::rt::cuda {

class CudaDevice;

/// One generation of the device's primary context.
struct Context {
  CUcontext handle = nullptr;
  uint64_t generation = 0;
  std::atomic<bool> alive{true};
  ptx::FaultRecord* fault_host = nullptr;  ///< host-mapped; device asserts write it
  CUdeviceptr fault_device = 0;
};

/// Makes `ctx` current on this thread for the scope (and restores the previous one).
class ContextScope {
 public:
  /// Throws for a failed cuCtxPushCurrent.
  ContextScope(const Driver& d, const Context& ctx);
  /// For destructors, which must not throw: entered() says whether the push worked (nothing of
  /// the context may be touched when it did not).
  ContextScope(const Driver& d, const Context& ctx, std::nothrow_t);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;
  bool entered() const { return entered_; }

 private:
  const Driver& d_;
  bool entered_ = false;
};

/// Device memory from cuMemAlloc (through the device's cache).
class CudaAllocation : public Allocation {
 public:
  CudaAllocation(CudaDevice* device, std::shared_ptr<Context> ctx, CUdeviceptr ptr, size_t bytes,
                 size_t capacity);
  ~CudaAllocation() override;
  const std::shared_ptr<Context>& context() const { return ctx_; }

 private:
  std::shared_ptr<Context> ctx_;
  size_t capacity_;
};

/// A kernel JIT-compiled for the device: its cubin, and its module in the current context
/// (loaded again after a reset).
class CudaKernel : public CompiledKernel {
 public:
  CudaKernel(CudaDevice* device, const target::Artifact& artifact, std::string cubin);
  ~CudaKernel() override;
  /// The function in the device's current context (loading the module there if needed).
  CUfunction function(const std::shared_ptr<Context>& ctx) const;
  uint32_t param_bytes() const { return param_end_; }
  /// Whether launches pass each parameter by pointer (kernelParams) rather than the packed
  /// block: where the driver places a parameter elsewhere than the block does. A 64-byte aligned
  /// tensor map is aligned in the constant bank, whose parameter area does not start at a
  /// multiple of 64 (sm_90: 0x210), so its offset depends on the architecture. Valid once
  /// function() has returned.
  bool params_by_pointer() const { return by_pointer_; }
  const std::string& cubin() const { return cubin_; }
  /// The TMA tensor maps the kernel reads (Artifact::tensor_maps), which each launch encodes
  /// into a copy of its parameter block (none: the block goes to the driver as it is).
  const LaunchTensorMaps& tensor_maps() const { return tensor_maps_; }
  /// "kernel 'name'", for error messages (built once, not per launch).
  const std::string& who() const { return who_; }
  /// The attributes of a cuLaunchKernelEx launch: the cluster's dimension, programmatic stream
  /// serialization.
  using LaunchAttributes = std::array<CUlaunchAttribute, 2>;
  /// The kernel's cuLaunchKernelEx configuration (block, shared memory) on `grid` and `stream`,
  /// its attributes in `attributes` (which must outlive the configuration's use): the cluster's
  /// dimension (cluster, 1, 1) for a clustered kernel, and, if `dependent` and the kernel is
  /// launched so (CompiledKernel::dependent_launch), programmatic stream serialization.
  CUlaunchConfig launch_config(Grid grid, CUstream stream, LaunchAttributes& attributes,
                               bool dependent) const;

  /// The driver's attributes of the function (registers, local memory, static shared memory,
  /// the block size limit), read whenever its module is loaded; never throws.
  std::optional<KernelStats> stats() const override;
  /// Why stats() is nullopt: "cuFuncGetAttribute(NUM_REGS) failed: CUDA_ERROR_... (n)".
  std::string stats_error() const;

 private:
  void verify_params(CUfunction f) const;
  void query_stats(CUfunction f) const;  // with mutex_ held
  /// For a clustered kernel: whether the device can co-schedule one of its clusters
  /// (cuOccupancyMaxActiveClusters with its block and shared memory, after the dynamic shared
  /// memory opt-in); the CUresult, and `detail`, the message of a refusal (empty if it fits).
  CUresult fits_cluster(CUfunction f, std::string& detail) const;

  CudaDevice* device_;
  std::string cubin_;
  bool has_fault_record_ = false;  ///< the module declares ptx::kFaultRecordSymbol
  std::string symbol_;             ///< the entry point in the module (Artifact::entry_symbol)
  std::string who_;
  uint32_t param_end_ = 0;  ///< end of the last parameter: what the driver reads of the block
  LaunchTensorMaps tensor_maps_;
  mutable bool by_pointer_ = false;  ///< params_by_pointer(), set by verify_params
  mutable std::mutex mutex_;
  mutable std::shared_ptr<Context> ctx_;
  mutable CUmodule module_ = nullptr;
  mutable CUfunction function_ = nullptr;
  mutable std::optional<KernelStats> stats_;  ///< registers, local_bytes, ...
  mutable std::string stats_error_;
};

class CudaStream;

class CudaDevice : public DeviceImpl {
 public:
  CudaDevice(const Driver& driver, int ordinal, CUdevice device);
  ~CudaDevice() override;

  const DeviceInfo& info() const override { return info_; }
  std::shared_ptr<Allocation> allocate(size_t bytes) override;
  std::shared_ptr<const CompiledKernel> compile(const ir::Module& module,
                                                const LaunchOptions& options) override;
  std::shared_ptr<StreamImpl> default_stream() override;
  std::shared_ptr<StreamImpl> create_stream() override;
  std::shared_ptr<EventImpl> create_event() override;
  double elapsed_ms(const EventImpl& start, const EventImpl& end) override;
  void synchronize() override;
  /// A CUdeviceptr range of this device's primary context (checked with cuPointerGetAttribute).
  std::shared_ptr<Allocation> wrap(uint64_t address, size_t bytes,
                                   std::shared_ptr<void> keep) override;
  /// A stream over the caller's CUstream of the primary context (checked with cuStreamGetCtx).
  std::shared_ptr<StreamImpl> wrap_stream(uint64_t handle) override;
  uint64_t native_handle(NativeHandle which) override;
  /// cuDevicePrimaryCtxReset: ends the context generation (if live) and resets it.
  void reset() override;
  /// Frees the cached memory and releases the primary context: what was made in it goes with it.
  void close() override;

  /// JIT-compiles a PTX artifact (or takes its cubin from the disk cache) and loads it.
  std::shared_ptr<const CompiledKernel> load(const target::Artifact& artifact);

  const Driver& driver() const { return d_; }
  const target::Target& target() const { return target_; }
  int multiprocessors() const { return multiprocessors_; }
  CUdevice handle() const { return device_; }
  /// The device's encoded TMA tensor maps, per argument set (the launches of every kernel).
  TensorMapCache& tensor_map_cache() { return tensor_map_cache_; }
  const TensorMapCache& tensor_map_cache() const { return tensor_map_cache_; }

  /// The live context, made (or remade after a fault) on demand.
  std::shared_ptr<Context> context();
  /// Records a sticky fault seen by `call` in `ctx`, releases (or, with
  /// TESSERA_CUDA_RESET_ON_FAULT=1, resets) the primary context, and throws DeviceFault
  /// naming the call, the error, the kernels and any device assert.
  [[noreturn]] void fault(const std::shared_ptr<Context>& ctx, CUresult r, const char* call,
                          const std::string& kernels);
  /// Checks a driver result: sticky faults go through fault(), other errors throw.
  void check_call(const std::shared_ptr<Context>& ctx, CUresult r, const char* call,
                  const std::string& kernels = {}, const std::string& detail = {});
  /// Polls `query` (cuStreamQuery or cuEventQuery in `ctx`, which the caller made current) until
  /// it answers something other than CUDA_ERROR_NOT_READY, and returns that. Polling, not a
  /// blocking synchronize, so that the wait can end: after TESSERA_TIMEOUT the device is treated
  /// as lost (see hung()). `call` and `kernels()` (called only then) name the wait. A query does
  /// not deliver device printf output: callers synchronize once the query says done.
  template <class Query, class Kernels>
  CUresult await(const std::shared_ptr<Context>& ctx, Query query, const char* call,
                 Kernels kernels);
  /// Marks the device lost because `call` timed out after `seconds` waiting for `kernels` in
  /// `ctx`, and throws that DeviceFault. The context is left as it is (its work may still run):
  /// nothing of it is freed or waited for again, and every later use of the device throws.
  [[noreturn]] void hung(const std::shared_ptr<Context>& ctx, const char* call,
                         const std::string& kernels, double seconds);
  /// Why generation `g` ended (empty if it did not).
  std::string fault_message(uint64_t generation) const;
  /// Throws Runtime when an allocation belongs to a context that a fault ended.
  void check_alive(const Allocation& a, const char* what) const;

  /// Returns a block to the cache (or frees it).
  void release(const std::shared_ptr<Context>& ctx, CUdeviceptr ptr, size_t capacity);
  /// Pinned host memory for asynchronous uploads: at least `bytes`, returned with give_back().
  struct Pinned {
    void* host = nullptr;
    size_t bytes = 0;
    std::shared_ptr<Context> ctx;
  };
  Pinned take_pinned(size_t bytes);
  void give_back(Pinned p);

 private:
  std::shared_ptr<Context> make_context();
  void drop_caches();
  /// Throws Unsupported for an artifact whose cluster (Artifact::cluster) this device or driver
  /// cannot launch: more than 8 programs, a device before sm_90, a driver without
  /// cuLaunchKernelEx.
  void check_cluster(const target::Artifact& artifact) const;

  const Driver& d_;
  int ordinal_;
  CUdevice device_;
  DeviceInfo info_;
  target::Target target_;
  int multiprocessors_ = 0;

  mutable std::mutex mutex_;
  std::shared_ptr<Context> ctx_;
  uint64_t generations_ = 0;
  std::map<uint64_t, std::string> faults_;  // generation -> why it ended
  std::string lost_;                // non-empty: the driver refuses new contexts after a fault
  bool reset_since_fault_ = false;  // the primary context was reset after the last fault
  std::map<size_t, std::vector<CUdeviceptr>> free_;  // capacity -> cached blocks
  size_t cached_bytes_ = 0;
  std::map<size_t, std::vector<void*>> pinned_;  // bytes -> free pinned blocks
  std::shared_ptr<CudaStream> default_stream_;
  std::vector<std::weak_ptr<CudaStream>> streams_;
  bool closed_ = false;  // close() ran: no new context
  TensorMapCache tensor_map_cache_;
};

/// Waits that poll: yielding for the first 2 ms (as the driver's own spin-wait would), then
/// sleeps of a tenth of the time waited so far, at most 1 ms, so a wait ends at most about 10%
/// (and 1 ms) after its work.
void poll_pause(std::chrono::steady_clock::duration waited);
double poll_timeout_seconds();

template <class Query, class Kernels>
CUresult CudaDevice::await(const std::shared_ptr<Context>& ctx, Query query, const char* call,
                           Kernels kernels) {
  CUresult r = query();
  if (r != CUDA_ERROR_NOT_READY) return r;
  const double seconds = poll_timeout_seconds();
  const auto start = std::chrono::steady_clock::now();
  const auto limit = std::chrono::duration<double>(seconds);
  for (;;) {
    const auto waited = std::chrono::steady_clock::now() - start;
    if (seconds > 0 && waited >= limit) hung(ctx, call, kernels(), seconds);
    poll_pause(waited);
    r = query();
    if (r != CUDA_ERROR_NOT_READY) return r;
  }
}

/// TESSERA_DUMP=ptxstats: one line on the dump stream with `kernel`'s stats() on `device` (or why
/// the driver could not give them).
void dump_stats(const CudaKernel& kernel, const CudaDevice& device);

}  // namespace tessera::rt::cuda
