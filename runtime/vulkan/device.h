/// \file Vulkan devices (`vulkan:N`): discrete GPUs first, then integrated ones, then CPU
/// implementations such as Mesa's lavapipe. A device needs Vulkan 1.3 with bufferDeviceAddress,
/// subgroup size control with full subgroups, the Vulkan memory model and timeline semaphores.
///
/// Kernels take their parameters as one packed block (core/ir/abi.h) in push constants, or pushed
/// by address when the artifact says so; buffers are device addresses (BDA). Environment:
///   TESSERA_VULKAN_VALIDATION=1  the Khronos validation layer (with synchronization validation);
///                                any message fails the next synchronizing call (Internal)
///   TESSERA_CACHE_DIR            where the pipeline cache lives (default ~/.cache/tessera)
///   TESSERA_COOPMAT2=1           enable VK_NV_cooperative_matrix2 where offered (off by default:
///                                the driver then reserves shared memory; physical.h)
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/target/artifact.h"
#include "core/target/target.h"
#include "runtime/backend.h"
#include "runtime/vulkan/stream.h"

namespace tessera::rt::vk {

struct VulkanOptions {
  VkDeviceSize staging_bytes = VkDeviceSize{64} << 20;  ///< each stream's staging ring
  VkDeviceSize block_bytes = VkDeviceSize{256} << 20;   ///< the suballocator's block size
  /// Enable VK_NV_cooperative_matrix2 where the device offers it (also TESSERA_COOPMAT2=1):
  /// the target then has Cap::CooperativeMatrix2 and less shared memory (PhysicalFacts).
  bool coopmat2 = false;
};

/// A Vulkan device. Listing it costs only the probe: the VkDevice, its memory, pipeline cache and
/// utility kernels are made on first use.
class VulkanDevice final : public DeviceImpl {
 public:
  VulkanDevice(std::shared_ptr<Instance> instance, PhysicalFacts facts, int index,
               VulkanOptions options = {});
  ~VulkanDevice() override;

  const DeviceInfo& info() const override { return info_; }
  std::shared_ptr<Allocation> allocate(size_t bytes) override;
  /// Lowers and emits SPIR-V for this device's target (targets::compile), then load()s it.
  std::shared_ptr<const CompiledKernel> compile(const ir::Module& module,
                                                const LaunchOptions& options) override;
  std::shared_ptr<StreamImpl> default_stream() override;
  std::shared_ptr<StreamImpl> create_stream() override;
  std::shared_ptr<EventImpl> create_event() override;
  double elapsed_ms(const EventImpl& start, const EventImpl& end) override;
  void synchronize() override;
  /// A buffer device address range: usable by kernels only (transfers need wrap_vk_buffer).
  std::shared_ptr<Allocation> wrap(uint64_t address, size_t bytes,
                                   std::shared_ptr<void> keep) override;
  /// A range of the caller's VkBuffer (made on this device's VkDevice).
  std::shared_ptr<Allocation> wrap_vk_buffer(uint64_t buffer, uint64_t address, uint64_t offset,
                                             size_t bytes) override;
  uint64_t native_handle(NativeHandle which) override;

  /// Makes a compute pipeline of a compiled artifact (also hand-written SPIR-V in tests).
  /// Throws ErrorKind::Unsupported when it exceeds the device (shared memory, threads, subgroup
  /// size, push constants), naming the kernel, the need and the limit.
  std::shared_ptr<const CompiledKernel> load(const target::Artifact& artifact);

  const target::Target& target() const { return target_; }
  const PhysicalFacts& facts() const { return facts_; }
  MemoryPool::Stats memory_stats() { return open().memory->stats(); }
  /// The pipeline cache file and how much of it was accepted when the device opened.
  const PipelineCache& pipeline_cache() { return *open().cache; }

  /// Validation messages recorded so far (TESSERA_VULKAN_VALIDATION=1), and clearing them.
  bool validation_enabled() const { return instance_->validation(); }
  std::vector<std::string> validation_messages() const { return instance_->log().messages(); }
  void clear_validation_messages() { instance_->log().clear(); }

  /// Test hook: the next wait for (or poll of) this device's work reports VK_ERROR_DEVICE_LOST,
  /// as a real fault would, so the fault path can be tested on devices that do not fault.
  void inject_device_lost() { open().ctx->inject_device_lost(); }
  /// Test hook: the next submission of this device's work never finishes (Context::inject_hang),
  /// so waits for it run into TESSERA_TIMEOUT.
  void inject_hang() { open().ctx->inject_hang(); }

  /// Finishes queued work, destroys the pipelines of every kernel loaded here (statics made
  /// before main may still hold them) and then the VkDevice; what outlives it is abandoned
  /// (Context::abandon). Later uses are errors.
  void close() override;

  /// Submits every stream's open batch and waits until the device is idle, reporting nothing
  /// (errors are left to the destructors): what the process's exit does before the drivers tear
  /// themselves down (device.cpp: ExitDrain). Does nothing on a device that was never opened.
  void drain_quietly();

 private:
  /// The logical device and everything made from it; member order is destruction order reversed
  /// (streams finish their work first, the pipeline cache is saved, the VkDevice goes last).
  struct Open {
    std::shared_ptr<Context> ctx;
    std::shared_ptr<MemoryPool> memory;
    std::shared_ptr<QueryPools> queries;
    std::unique_ptr<PipelineCache> cache;
    DeviceShared shared;
    std::vector<std::weak_ptr<VulkanStream>> streams;
    std::shared_ptr<VulkanStream> default_stream;
    std::vector<std::weak_ptr<VulkanKernel>> kernels;  ///< every kernel load() made
  };
  /// The open device, made on first use (a failure throws and is retried by the next call).
  Open& open();
  std::shared_ptr<VulkanStream> make_stream(Open& o);

  DeviceInfo info_;
  target::Target target_;
  std::shared_ptr<Instance> instance_;
  PhysicalFacts facts_;
  VulkanOptions options_;
  std::once_flag opened_;
  std::unique_ptr<Open> open_;
  std::mutex streams_mutex_;
  std::mutex kernels_mutex_;
  std::atomic<bool> closed_{false};
};

/// The usable Vulkan physical devices, best first, or why there are none.
struct Discovery {
  std::shared_ptr<Instance> instance;
  std::vector<PhysicalFacts> devices;
  std::string unavailable;  ///< "vulkan unavailable: ..." when `devices` is empty
};
Discovery discover();

/// Opens an independent device (its own VkDevice) on the `index`-th usable physical device, as
/// `vulkan:<index>` would: for tests that need other options or a device they may break.
std::shared_ptr<VulkanDevice> open_device(int index, VulkanOptions options = {});

/// The internal fill and copy kernels of a device (runtime/vulkan/utility.cpp).
std::shared_ptr<const UtilityKernels> make_utility_kernels(const std::shared_ptr<Context>& ctx,
                                                           VkPipelineCache cache);

}  // namespace tessera::rt::vk
