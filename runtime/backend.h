/// \file The interface every device backend implements (host, cuda, vulkan). The public types in
/// device.h, buffer.h, stream.h and kernel.h are thin handles over these.
///
/// Backends consume compiled artifacts and never walk the tile IR themselves (the host backend
/// hands its artifact to core/interp, the executable definition of the IR).
#pragma once

#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../core/ir/abi.h"
#include "../core/ir/ir.h"
#include "../core/target/options.h"
#include "ordering.h"

namespace tessera {

/// Grid of programs (Triton's launch grid), up to three dimensions.
struct Grid {
  uint32_t x = 1, y = 1, z = 1;
  Grid() = default;
  /// Any integer types (so `kernel[{n}]` works for an int n); a negative or over-32-bit size is
  /// an ErrorKind::Argument error.
  template <std::integral X, std::integral Y = int, std::integral Z = int>
  Grid(X gx, Y gy = 1, Z gz = 1) {
    set(widen(gx), widen(gy), widen(gz));
  }
  uint64_t programs() const { return uint64_t{x} * y * z; }

 private:
  template <class T>
  static int64_t widen(T v) {
    if constexpr (std::is_unsigned_v<T>)
      return v > uint64_t{INT64_MAX} ? INT64_MAX : static_cast<int64_t>(v);
    else
      return static_cast<int64_t>(v);
  }
  void set(int64_t gx, int64_t gy, int64_t gz);
};

/// Options that ride with the grid: `kernel[{grid, {.num_warps = 8}}]` (core/target/options.h).
using LaunchOptions = CompileOptions;

/// What a device says about itself.
struct DeviceInfo {
  std::string name;         ///< "host", "cuda:0", "vulkan:1"
  std::string kind;         ///< "host", "cuda", "vulkan"
  std::string description;  ///< e.g. "Tessera host interpreter", "NVIDIA H200"
  std::string target;       ///< the target description's text form
  int rank = 0;             ///< preference for Device::best(): higher is better
  bool is_cpu = false;      ///< runs on the host CPU (interpreters, lavapipe): keep problems small
  /// Every launch runs in debug mode (CompileOptions::debug): the interpreters, which define
  /// what an access may touch.
  bool checks_bounds = false;
  /// Memory for buffers, in bytes (0: unknown): the machine's RAM for host and simt devices,
  /// cuDeviceTotalMem on CUDA, the largest device-local heap on Vulkan.
  uint64_t memory_bytes = 0;
  /// Programs that run at once at one per multiprocessor: the SM count on CUDA (what a
  /// persistent kernel sizes its grid by, as Triton's users read `multi_processor_count`); on
  /// Vulkan the SMs (VK_NV_shader_sm_builtins) or AMD's active compute units
  /// (VK_AMD_shader_core_properties2); 0 where unknown (other Vulkan drivers, lavapipe, the
  /// interpreters).
  int multiprocessors = 0;
  /// Further lines for `tessera devices --verbose` (optional features and their state, e.g.
  /// VK_NV_cooperative_matrix2); empty when there is nothing more to say.
  std::string details;
};

namespace rt {

class DeviceImpl;

/// A block of device memory. Freed when the last Buffer referring to it goes away.
class Allocation {
 public:
  Allocation(DeviceImpl* device, uint64_t address, size_t bytes)
      : device_(device), address_(address), bytes_(bytes) {}
  virtual ~Allocation() = default;
  DeviceImpl* device() const { return device_; }
  uint64_t address() const { return address_; }
  size_t bytes() const { return bytes_; }
  /// The VkBuffer holding this memory and the allocation's offset in it (Vulkan); {0, 0} where
  /// the backend has none.
  virtual std::pair<uint64_t, uint64_t> vk_buffer() const { return {0, 0}; }

 private:
  DeviceImpl* device_;
  uint64_t address_;
  size_t bytes_;
};

/// Memory the caller owns, wrapped (Device::wrap): never freed by Tessera. `keep` (may be null)
/// is held as long as the allocation, and released after it (a DLPack tensor's deleter).
class ExternalAllocation : public Allocation {
 public:
  ExternalAllocation(DeviceImpl* device, uint64_t address, size_t bytes, std::shared_ptr<void> keep)
      : Allocation(device, address, bytes), keep_(std::move(keep)) {}

 private:
  std::shared_ptr<void> keep_;
};

/// A backend object handed out to interoperate with other libraries (Device::cu_context, ...).
enum class NativeHandle { CuContext, CuDevice, VkInstance, VkPhysicalDevice, VkDevice, VkQueue };
/// "CUcontext", "VkDevice", ...
const char* native_handle_name(NativeHandle which);
/// "0x7f12a0000000", for messages about addresses.
std::string hex_address(uint64_t address);

/// What a GPU driver says a compiled kernel uses of the machine (CUDA: cuFuncGetAttribute).
struct KernelStats {
  int registers = 0;              ///< per thread
  int local_bytes = 0;            ///< per thread: register spills and stack frame
  int static_shared_bytes = 0;    ///< declared in the code; launches add shared_bytes
  int max_threads_per_block = 0;  ///< the most threads a block of this kernel can have
};

/// A kernel compiled for one device, specialization and set of options.
class CompiledKernel {
 public:
  virtual ~CompiledKernel() = default;
  /// The driver's statistics; nullopt where the backend has none or the driver could not say
  /// (TESSERA_DUMP=ptxstats prints why).
  virtual std::optional<KernelStats> stats() const { return std::nullopt; }
  std::string name;
  ir::ParamLayout params;
  /// The last this many slots of `params` hold TMA tensor maps, which the backend encodes at
  /// each launch (CUDA); the arguments fill the slots before them.
  uint32_t tensor_map_slots = 0;
  uint32_t threads_per_program = 0;  ///< 0 on the host
  uint32_t shared_bytes = 0;
  /// Programs per thread-block cluster along x (Artifact::cluster): above 1 only for CUDA kernels
  /// of sm_90 and newer, which launch as clusters; 1 on every other backend.
  uint32_t cluster = 1;
  /// (CUDA) The kernel waits at its entry for its stream's previous grid
  /// (Artifact::dependent_launch) and the device launches it with programmatic stream
  /// serialization: its launch may overlap the end of the grid before it. False where the driver
  /// cannot launch so (cuLaunchKernelEx, CUDA 12.3: Cap::DependentLaunch of the device's target)
  /// and on every other backend.
  bool dependent_launch = false;
};

class EventImpl {
 public:
  virtual ~EventImpl() = default;
};

class StreamImpl;

/// Launches captured on a stream (StreamImpl::begin_capture), replayed as one unit
/// (tessera::Graph is the public handle).
class GraphImpl {
 public:
  virtual ~GraphImpl() = default;
  /// The device the graph was captured on; it replays only on that device's streams.
  virtual DeviceImpl* device() const = 0;
  /// The number of kernel launches captured.
  virtual size_t launches() const = 0;
  /// Enqueues the captured launches on `stream` (a stream of device(), not capturing), with the
  /// arguments they were captured with. The caller orders and counts it (runtime/ordering.h).
  virtual void replay(StreamImpl& stream) = 0;
};

/// A backend's graph (CudaGraph, VulkanGraph), which its own kind of stream replays:
/// `StreamT::replay_graph(std::shared_ptr<GraphT>)` enqueues it. Graph::replay has checked that
/// the stream belongs to the graph's device, hence is a StreamT.
template <class GraphT, class StreamT>
class BackendGraph : public GraphImpl, public std::enable_shared_from_this<GraphT> {
 public:
  void replay(StreamImpl& stream) final {
    static_cast<StreamT&>(stream).replay_graph(this->shared_from_this());
  }
};

class RecordedGraph;

/// An ordered queue of device work. Errors of asynchronous work are kept and thrown by the next
/// synchronizing call on the stream (synchronize, a download), as CUDA does.
class StreamImpl {
 public:
  virtual ~StreamImpl() = default;
  virtual DeviceImpl* device() const = 0;
  virtual void launch(std::shared_ptr<const CompiledKernel> kernel, Grid grid,
                      std::vector<std::byte> params,
                      std::vector<std::shared_ptr<Allocation>> keep_alive) = 0;
  /// The launch path's entry (KernelBase::launch): `params` is the packed block and
  /// `keep_alive` the buffers the kernel uses, which the backend may move from to hold them until
  /// the work is done. Backends override it to launch without copying into vectors; the default
  /// records the launch while a default capture is open, else copies and calls launch().
  virtual void launch_packed(const std::shared_ptr<const CompiledKernel>& kernel, Grid grid,
                             std::span<const std::byte> params,
                             std::span<std::shared_ptr<Allocation>> keep_alive);
  virtual void upload(std::shared_ptr<Allocation> dst, size_t offset, const void* src,
                      size_t bytes) = 0;
  virtual void download(std::shared_ptr<Allocation> src, size_t offset, void* dst,
                        size_t bytes) = 0;  ///< synchronous: returns when the data is in dst
  virtual void fill(std::shared_ptr<Allocation> dst, size_t offset, size_t bytes,
                    const void* pattern, size_t pattern_bytes) = 0;
  virtual void copy(std::shared_ptr<Allocation> dst, size_t dst_offset,
                    std::shared_ptr<Allocation> src, size_t src_offset, size_t bytes) = 0;
  virtual void record(std::shared_ptr<EventImpl> event) = 0;
  virtual void wait(std::shared_ptr<EventImpl> event) = 0;
  virtual void synchronize() = 0;
  /// The backend's own stream handle (CUstream); ErrorKind::Argument naming the device where
  /// streams have none.
  virtual uint64_t native_handle();

  /// Starts capturing (tessera::Stream::begin_capture): until end_capture, launches on this
  /// stream are recorded into a graph instead of run, and the public layer refuses other work
  /// on it. The default records each launch (runtime/graph.cpp) and replays them one by one (the
  /// host and simt devices); CUDA captures a CUDA graph, Vulkan one command buffer.
  virtual void begin_capture();
  /// Ends the capture: the graph of the launches since begin_capture.
  virtual std::shared_ptr<GraphImpl> end_capture();
  /// Ends the capture and drops what it recorded (the capture's body threw).
  virtual void abandon_capture();
  /// Whether a capture is open on this stream.
  bool capturing() const { return capturing_.load(std::memory_order_acquire); }

  /// The public layer's cross-stream order (runtime/ordering.h); backends leave it alone.
  StreamOrder ordering;

 protected:
  /// Set by begin_capture, cleared by end_capture and abandon_capture (overrides set it too).
  std::atomic<bool> capturing_{false};

 private:
  std::shared_ptr<RecordedGraph> recording_;  // the default capture's launches
};

class DeviceImpl : public std::enable_shared_from_this<DeviceImpl> {
 public:
  virtual ~DeviceImpl() = default;
  virtual const DeviceInfo& info() const = 0;
  /// Allocates `bytes` (throws ErrorKind::OutOfMemory with the size and the device).
  virtual std::shared_ptr<Allocation> allocate(size_t bytes) = 0;
  /// Compiles a tile-IR kernel as traced through the pipeline (core/passes/pipeline.h; the GPU
  /// targets through targets/compile.h) for this device's target (throws ErrorKind::User or
  /// Unsupported).
  virtual std::shared_ptr<const CompiledKernel> compile(const ir::Module& traced,
                                                        const LaunchOptions& options) = 0;
  virtual std::shared_ptr<StreamImpl> default_stream() = 0;
  virtual std::shared_ptr<StreamImpl> create_stream() = 0;
  virtual std::shared_ptr<EventImpl> create_event() = 0;
  /// Milliseconds between two recorded events (waits for both).
  virtual double elapsed_ms(const EventImpl& start, const EventImpl& end) = 0;
  virtual void synchronize() = 0;

  /// Interop (runtime/interop.cpp has the defaults, which refuse with ErrorKind::Argument or
  /// Unsupported naming the device).
  /// Wraps `bytes` at `address`, memory the caller owns, holding `keep` while it is in use.
  virtual std::shared_ptr<Allocation> wrap(uint64_t address, size_t bytes,
                                           std::shared_ptr<void> keep);
  /// Wraps `bytes` from `offset` of a VkBuffer whose device address (of its byte 0) is `address`.
  virtual std::shared_ptr<Allocation> wrap_vk_buffer(uint64_t buffer, uint64_t address,
                                                     uint64_t offset, size_t bytes);
  /// A stream over the backend's own stream handle (a CUstream), which the caller owns.
  virtual std::shared_ptr<StreamImpl> wrap_stream(uint64_t handle);
  virtual uint64_t native_handle(NativeHandle which);
  /// Resets the device after a fault (CUDA: the primary context); nothing elsewhere.
  virtual void reset() {}
  /// Releases what the device holds of its driver (finishing queued work first), while the
  /// driver can still take it back: the device registry calls it when it is destroyed at exit,
  /// before the drivers' own exit-time teardown. Kernels, buffers and streams that outlive it (a
  /// static made before main holds them) make no driver call afterwards, and a later use is an
  /// error. Never throws; idempotent.
  virtual void close() {}

  /// The public layer's cross-stream order (runtime/ordering.h); backends leave it alone.
  DeviceOrder ordering;
  /// The most programs a launch's grid may have along each axis, from info().target: set once,
  /// at the first launch (runtime/kernel.cpp, under grid_limits_mutex, then grid_limits_known),
  /// so that later launches read three numbers.
  std::array<int64_t, 3> grid_limits{};
  std::atomic<bool> grid_limits_known{false};
  std::mutex grid_limits_mutex;
  /// Unique in the process and never reused, unlike the object's address: what the caches of
  /// compiled kernels key on (a device opened after another was destroyed may get its address).
  const uint64_t serial = next_serial();

 private:
  static uint64_t next_serial() {
    static std::atomic<uint64_t> counter{0};
    return ++counter;
  }
};

/// A backend's list of devices, or the reason it has none.
struct DriverReport {
  std::string kind;
  std::vector<std::shared_ptr<DeviceImpl>> devices;
  std::string unavailable;  ///< "cuda unavailable: libcuda.so.1 not found", empty when fine
};

/// Each backend's enumerate function; runtime/device.cpp lists them in one table.
DriverReport enumerate_host();
DriverReport enumerate_cuda();
DriverReport enumerate_vulkan();

}  // namespace rt
}  // namespace tessera
