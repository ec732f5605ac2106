/// \file The Vulkan device: discovery and ordering of physical devices, the DeviceImpl entry
/// points, and the driver-table function enumerate_vulkan.
#include "runtime/artifact_cache.h"
#include "runtime/vulkan/device.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace tessera::rt {
namespace vk {
namespace {

std::string describe(const PhysicalFacts& f) {
  auto v = [](uint32_t x) {
    return std::to_string(VK_API_VERSION_MAJOR(x)) + "." + std::to_string(VK_API_VERSION_MINOR(x)) +
           "." + std::to_string(VK_API_VERSION_PATCH(x));
  };
  std::string driver = f.p12.driverName;
  if (f.p12.driverInfo[0]) driver += std::string(" ") + f.p12.driverInfo;
  std::string units;
  if (f.multiprocessors)
    units = "; " + std::to_string(f.multiprocessors) +
            (f.has_extension(VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME) ? " SMs" : " compute units");
  return f.device_name() + "; driver " + driver + "; Vulkan " + v(f.props.apiVersion) + units;
}

/// The largest device-local heap: where buffers live.
uint64_t device_local_bytes(const VkPhysicalDeviceMemoryProperties& m) {
  uint64_t most = 0;
  for (uint32_t i = 0; i < m.memoryHeapCount; ++i)
    if (m.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      most = std::max<uint64_t>(most, m.memoryHeaps[i].size);
  return most;
}

/// Every opened VulkanDevice, drained when the process exits. A program may return from main
/// with work still queued. The device registry (runtime/device.cpp) is a static made before any
/// VkDevice, so its destructor runs after the exit handlers a driver registers when it makes a
/// VkDevice: lavapipe (Mesa 22.3) registers two in vkCreateDevice, one of them Mesa's handler that
/// kills its thread queues (the disk cache's among them). The registry then waited for work, and
/// destroyed the device, on a driver already partly torn down (an abort at exit, seen once).
/// Draining first leaves the drivers idle before any of their teardown: from a thread_local of
/// the main thread (exit() runs the calling thread's thread_local destructors before every atexit
/// handler) and, for an exit() from another thread, from an atexit handler registered just after
/// the first VkDevice is made (so after the driver's, and run before them).
class ExitDrain {
 public:
  /// Adds an opened device (first call: installs the atexit handler).
  static void add(VulkanDevice* device) {
    ExitDrain& d = get();
    std::call_once(d.installed_, [] { std::atexit(drain_all); });
    if (getpid() == static_cast<pid_t>(syscall(SYS_gettid))) {
      thread_local MainThreadGuard guard;
      (void)guard;
    }
    std::lock_guard lock(d.mutex_);
    d.devices_.push_back(device);
  }
  /// Removes a device being destroyed.
  static void remove(VulkanDevice* device) {
    ExitDrain& d = get();
    std::lock_guard lock(d.mutex_);
    std::erase(d.devices_, device);
  }

 private:
  struct MainThreadGuard {
    ~MainThreadGuard() { drain_all(); }
  };
  /// Never destroyed: it is used during exit, after static destructors may have run.
  static ExitDrain& get() {
    static auto* d = new ExitDrain();
    return *d;
  }
  static void drain_all() {
    ExitDrain& d = get();
    std::lock_guard lock(d.mutex_);
    for (VulkanDevice* device : d.devices_) device->drain_quietly();
  }

  std::once_flag installed_;
  std::mutex mutex_;
  std::vector<VulkanDevice*> devices_;
};

}  // namespace

Discovery discover() {
  Discovery d;
  std::string why;
  d.instance = Instance::get(&why);
  if (!d.instance) {
    d.unavailable = "vulkan unavailable: " + why;
    return d;
  }
  std::vector<VkPhysicalDevice> handles;
  try {
    handles = d.instance->physical_devices();
  } catch (const Error& e) {
    d.unavailable = std::string("vulkan unavailable: no Vulkan device (") + e.what() + ")";
    return d;
  }
  if (handles.empty()) {
    d.unavailable =
        "vulkan unavailable: no Vulkan driver reports a device (install a GPU driver, or "
        "mesa-vulkan-drivers for lavapipe)";
    return d;
  }
  std::string rejected;
  for (VkPhysicalDevice h : handles) {
    PhysicalFacts f = probe(*d.instance, h);
    if (f.missing.empty())
      d.devices.push_back(std::move(f));
    else
      rejected += (rejected.empty() ? "" : "; ") + f.device_name() + " lacks " + f.missing;
  }
  std::stable_sort(
      d.devices.begin(), d.devices.end(),
      [](const PhysicalFacts& a, const PhysicalFacts& b) { return a.rank() > b.rank(); });
  if (d.devices.empty())
    d.unavailable =
        "vulkan unavailable: no device supports Vulkan 1.3 with bufferDeviceAddress, "
        "subgroupSizeControl + computeFullSubgroups, vulkanMemoryModel and timeline "
        "semaphores (" +
        rejected + ")";
  return d;
}

std::shared_ptr<VulkanDevice> open_device(int index, VulkanOptions options) {
  Discovery d = discover();
  if (d.devices.empty()) fail(ErrorKind::Runtime, d.unavailable);
  if (index < 0 || static_cast<size_t>(index) >= d.devices.size())
    fail(ErrorKind::Runtime, "no device named 'vulkan:", index, "' (", d.devices.size(),
         " Vulkan devices)");
  return std::make_shared<VulkanDevice>(d.instance, std::move(d.devices[index]), index, options);
}

VulkanDevice::VulkanDevice(std::shared_ptr<Instance> instance, PhysicalFacts facts, int index,
                           VulkanOptions options)
    : instance_(std::move(instance)), facts_(std::move(facts)), options_(options) {
  facts_.coopmat2_requested = options_.coopmat2 || coopmat2_requested_by_env();
  info_.name = "vulkan:" + std::to_string(index);
  info_.kind = "vulkan";
  info_.description = describe(facts_);
  info_.rank = facts_.rank();
  info_.is_cpu = facts_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  target_ = facts_.target(info_.name);
  info_.target = target_.str();
  info_.memory_bytes = device_local_bytes(facts_.memory);
  info_.multiprocessors = static_cast<int>(facts_.multiprocessors);
  info_.details = facts_.coopmat2_report();
}

VulkanDevice::~VulkanDevice() {
  close();
}

void VulkanDevice::close() {
  if (closed_.exchange(true) || !open_) return;
  ExitDrain::remove(this);
  drain_quietly();
  std::vector<std::shared_ptr<VulkanKernel>> kernels;
  {
    std::lock_guard lock(kernels_mutex_);
    for (auto& w : open_->kernels)
      if (auto k = w.lock()) kernels.push_back(std::move(k));
    open_->kernels.clear();
  }
  for (auto& k : kernels) k->release();
  kernels.clear();
  std::weak_ptr<Context> ctx = open_->ctx;
  open_.reset();  // streams, utility kernels, the pipeline cache (saved), memory, the VkDevice
  // Buffers, streams or events still held elsewhere keep the Context: they touch nothing now.
  if (std::shared_ptr<Context> held = ctx.lock()) held->abandon();
}

VulkanDevice::Open& VulkanDevice::open() {
  if (closed_.load())
    fail(ErrorKind::Runtime, info_.name,
         " was closed when the device registry was destroyed at process exit; nothing can run on "
         "it now (a static kernel, buffer or stream used during exit?)");
  std::call_once(opened_, [&] {
    auto o = std::make_unique<Open>();
    o->ctx = std::make_shared<Context>(instance_, facts_, info_.name);
    o->memory = std::make_shared<MemoryPool>(o->ctx, options_.block_bytes);
    o->queries = std::make_shared<QueryPools>(o->ctx);
    o->cache = std::make_unique<PipelineCache>(o->ctx);
    o->shared.owner = this;
    o->shared.ctx = o->ctx;
    o->shared.memory = o->memory;
    o->shared.queries = o->queries;
    o->shared.utils = make_utility_kernels(o->ctx, o->cache->handle());
    o->shared.staging_bytes = options_.staging_bytes;
    open_ = std::move(o);
    ExitDrain::add(this);
  });
  return *open_;
}

void VulkanDevice::drain_quietly() {
  if (!open_) return;
  std::vector<std::shared_ptr<VulkanStream>> streams;
  {
    std::lock_guard lock(streams_mutex_);
    for (auto& w : open_->streams)
      if (auto s = w.lock()) streams.push_back(std::move(s));
  }
  for (auto& s : streams) {
    try {
      s->synchronize();
    } catch (...) {
      // A fault, a timeout or a validation message: the destructors report or skip what is left.
    }
  }
  if (!open_->ctx->lost()) open_->ctx->wait_idle_quietly();
}

std::shared_ptr<Allocation> VulkanDevice::allocate(size_t bytes) {
  return open().memory->allocate(this, bytes);
}

std::shared_ptr<Allocation> VulkanDevice::wrap(uint64_t address, size_t bytes,
                                               std::shared_ptr<void> keep) {
  return std::make_shared<ExternalAllocation>(this, address, bytes, std::move(keep));
}

std::shared_ptr<Allocation> VulkanDevice::wrap_vk_buffer(uint64_t buffer, uint64_t address,
                                                         uint64_t offset, size_t bytes) {
  const std::string where = "wrap_vk_buffer on " + info_.name;
  if (buffer == 0) fail(ErrorKind::Argument, where, ": the VkBuffer is null");
  if (address == 0)
    fail(ErrorKind::Argument, where, ": VkBuffer ", hex_address(buffer),
         " has no device address (0): create it with VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT "
         "and pass vkGetBufferDeviceAddress's result");
  if (offset > UINT64_MAX - address || bytes > UINT64_MAX - address - offset)
    fail(ErrorKind::Argument, where, ": ", bytes, " bytes at offset ", offset,
         " of the buffer at device address ", hex_address(address), " overflow the address space");
  open();  // the VkBuffer can only be of this device's VkDevice: make sure there is one
  return std::make_shared<PoolAllocation>(this, reinterpret_cast<VkBuffer>(buffer), address, offset,
                                          bytes);
}

uint64_t VulkanDevice::native_handle(NativeHandle which) {
  switch (which) {
    case NativeHandle::VkInstance:
      return reinterpret_cast<uint64_t>(instance_->handle());
    case NativeHandle::VkPhysicalDevice:
      return reinterpret_cast<uint64_t>(facts_.handle);
    case NativeHandle::VkDevice:
      return reinterpret_cast<uint64_t>(open().ctx->device());
    case NativeHandle::VkQueue: {
      Open& o = open();
      VkQueue queue = VK_NULL_HANDLE;
      o.ctx->fns().vkGetDeviceQueue(o.ctx->device(), facts_.queue_family, 0, &queue);
      return reinterpret_cast<uint64_t>(queue);
    }
    default:
      return DeviceImpl::native_handle(which);
  }
}

std::shared_ptr<const CompiledKernel> VulkanDevice::compile(const ir::Module& module,
                                                            const LaunchOptions& options) {
  open().ctx->check_alive();
  return load(jit_compile(module, target_, options));
}

std::shared_ptr<const CompiledKernel> VulkanDevice::load(const target::Artifact& artifact) {
  Open& o = open();
  auto kernel = std::make_shared<VulkanKernel>(o.ctx, o.cache->handle(), artifact);
  std::lock_guard lock(kernels_mutex_);
  std::erase_if(o.kernels, [](const auto& w) { return w.expired(); });
  o.kernels.push_back(kernel);
  return kernel;
}

std::shared_ptr<VulkanStream> VulkanDevice::make_stream(Open& o) {
  o.ctx->check_alive();
  auto s = std::make_shared<VulkanStream>(o.shared);
  std::erase_if(o.streams, [](const auto& w) { return w.expired(); });
  o.streams.push_back(s);
  return s;
}

std::shared_ptr<StreamImpl> VulkanDevice::default_stream() {
  Open& o = open();
  std::lock_guard lock(streams_mutex_);
  if (!o.default_stream) o.default_stream = make_stream(o);
  return o.default_stream;
}

std::shared_ptr<StreamImpl> VulkanDevice::create_stream() {
  Open& o = open();
  std::lock_guard lock(streams_mutex_);
  return make_stream(o);
}

std::shared_ptr<EventImpl> VulkanDevice::create_event() {
  Open& o = open();
  o.ctx->check_alive();
  return std::make_shared<VulkanEvent>(o.queries);
}

double VulkanDevice::elapsed_ms(const EventImpl& start, const EventImpl& end) {
  Open& o = open();
  Context& ctx = *o.ctx;
  ctx.check_alive();
  if (!o.queries->timestamps())
    fail(ErrorKind::Unsupported, info_.name,
         ": its queue has no timestamps (timestampValidBits = 0)");
  uint64_t stamps[2];
  const EventImpl* events[2] = {&start, &end};
  for (int i = 0; i < 2; ++i) {
    const auto& e = static_cast<const VulkanEvent&>(*events[i]);
    VulkanEvent::Mark mark = e.mark();
    if (!mark.recorded)
      fail(ErrorKind::Argument, info_.name, ": elapsed time of an event that was never recorded");
    if (auto stream = mark.stream.lock()) stream->wait_for(mark.value);  // gone: its work is done
    ctx.check(ctx.fns().vkGetQueryPoolResults(ctx.device(), e.slot().pool, e.slot().index, 1,
                                              sizeof(uint64_t), &stamps[i], sizeof(uint64_t),
                                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
              "vkGetQueryPoolResults");
  }
  return o.queries->elapsed_ms(stamps[0], stamps[1]);
}

void VulkanDevice::synchronize() {
  Open& o = open();
  std::vector<std::shared_ptr<VulkanStream>> streams;
  {
    std::lock_guard lock(streams_mutex_);
    for (auto& w : o.streams)
      if (auto s = w.lock()) streams.push_back(std::move(s));
  }
  o.ctx->check_alive();
  for (auto& s : streams) s->synchronize();
  o.ctx->check_validation();
}

}  // namespace vk

DriverReport enumerate_vulkan() {
  DriverReport report;
  report.kind = "vulkan";
  vk::Discovery d = vk::discover();
  report.unavailable = d.unavailable;
  for (size_t i = 0; i < d.devices.size(); ++i)
    report.devices.push_back(std::make_shared<vk::VulkanDevice>(d.instance, std::move(d.devices[i]),
                                                                static_cast<int>(i)));
  return report;
}

}  // namespace tessera::rt
