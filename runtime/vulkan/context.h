/// \file One logical Vulkan device: the VkDevice, its entry points, its compute queue, and whether
/// it has been lost. Every other Vulkan object of a device holds the Context by shared_ptr, so
/// the VkDevice outlives them; `Unique` owns one such object (RAII).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/vulkan/physical.h"

namespace tessera::rt::vk {

class Context {
 public:
  /// Creates the VkDevice with the features the emitter may use; `name` is "vulkan:N".
  Context(std::shared_ptr<Instance> instance, PhysicalFacts facts, std::string name);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  VkDevice device() const { return device_; }
  const DeviceFns& fns() const { return fns_; }
  const PhysicalFacts& facts() const { return facts_; }
  const VkPhysicalDeviceLimits& limits() const { return facts_.props.limits; }
  const std::string& name() const { return name_; }
  Instance& instance() const { return *instance_; }

  /// vkQueueSubmit2 on the device's one queue (serialized: the queue is externally synchronized).
  VkResult submit(const VkSubmitInfo2& info);
  /// vkQueueWaitIdle, ignoring errors (used before releasing the resources of lost work). Returns
  /// at once on a device that stopped answering (mark_hung): that wait would never end.
  void wait_idle_quietly();

  /// Waits until timeline `semaphore` reaches `value` (vkWaitSemaphores, through
  /// filter_wait_result). The wait goes on while the counter moves, and returns VK_TIMEOUT once it
  /// stood still for TESSERA_TIMEOUT (*seconds says how long that was): the device stopped.
  VkResult wait_semaphore(VkSemaphore semaphore, uint64_t value, double* seconds);
  /// Marks the device lost because a wait for its work timed out: its queue may never drain, so
  /// later teardown neither waits for it nor destroys the VkDevice (the work may still use it).
  void mark_hung(const std::string& why);
  bool hung() const { return hung_.load(); }
  /// Destroys an object later, after the queue has drained at teardown: on a device that stopped
  /// answering, work that may never finish can still use it (vkDestroy* under pending work is
  /// invalid). On a really hung device teardown never drains the queue, so it is never destroyed.
  void defer_destroy(std::function<void(const DeviceFns&, VkDevice)> destroy) const;

  /// Throws for a failed call; VK_ERROR_DEVICE_LOST also marks the device lost.
  void check(VkResult result, std::string_view call, std::string_view kernel = {});
  /// Throws ErrorKind::DeviceFault when the device was lost earlier.
  void check_alive() const;
  bool lost() const { return lost_.load(); }
  /// Marks the device lost with the reason (the first reason wins); later calls throw it.
  void mark_lost(const std::string& why);
  std::string lost_reason() const;

  /// The device was closed at exit while objects made from it live on (statics made before main
  /// hold them): from now on nothing calls the driver for them (the driver reclaims them with
  /// the process), and new work fails with the reason.
  void abandon();
  bool abandoned() const { return abandoned_.load(); }

  /// With validation on: throws ErrorKind::Internal with the validation messages not reported
  /// yet (called by every synchronizing call, so any message fails a test).
  void check_validation();

  /// Test hook: the next wait for device work reports VK_ERROR_DEVICE_LOST.
  void inject_device_lost() { inject_lost_.store(true); }
  /// Test hook: the next submission also waits for a semaphore that nothing signals until the
  /// queue is drained for teardown (wait_idle_quietly, the destructor), so its work really never
  /// finishes, as on a hung device; waits for it time out.
  void inject_hang() { inject_hang_.store(true); }
  /// Consumes the injected fault: VK_ERROR_DEVICE_LOST once after inject_device_lost().
  VkResult filter_wait_result(VkResult result);

 private:
  std::shared_ptr<Instance> instance_;
  PhysicalFacts facts_;
  std::string name_;
  VkDevice device_ = VK_NULL_HANDLE;
  DeviceFns fns_;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::mutex queue_mutex_;
  std::atomic<bool> lost_{false};
  std::atomic<bool> inject_lost_{false};
  std::atomic<bool> inject_hang_{false};
  std::atomic<bool> hung_{false};
  std::atomic<bool> abandoned_{false};
  /// release_hang() signals it; the caller holds queue_mutex_.
  VkSemaphore hang_ = VK_NULL_HANDLE;
  void release_hang();
  mutable std::mutex lost_mutex_;
  std::string lost_reason_;
  mutable std::mutex deferred_mutex_;
  mutable std::vector<std::function<void(const DeviceFns&, VkDevice)>> deferred_;
};

/// Owns one device-level Vulkan object; `Destroy` is the DeviceFns member that destroys it
/// (vkDestroyBuffer, vkFreeMemory, ...). The owner keeps the Context alive longer than this.
template <class Handle, auto Destroy>
class Unique {
 public:
  Unique() = default;
  Unique(const Context* ctx, Handle handle) : ctx_(ctx), handle_(handle) {}
  ~Unique() { reset(); }
  Unique(Unique&& o) noexcept : ctx_(o.ctx_), handle_(o.handle_) { o.handle_ = VK_NULL_HANDLE; }
  Unique& operator=(Unique&& o) noexcept {
    if (this != &o) {
      reset();
      ctx_ = o.ctx_;
      handle_ = o.handle_;
      o.handle_ = VK_NULL_HANDLE;
    }
    return *this;
  }
  Unique(const Unique&) = delete;
  Unique& operator=(const Unique&) = delete;

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != VK_NULL_HANDLE; }
  void reset() {
    if (handle_ != VK_NULL_HANDLE && !ctx_->abandoned()) {
      if (ctx_->hung())
        ctx_->defer_destroy(
            [h = handle_](const DeviceFns& f, VkDevice d) { (f.*Destroy)(d, h, nullptr); });
      else
        (ctx_->fns().*Destroy)(ctx_->device(), handle_, nullptr);
    }
    handle_ = VK_NULL_HANDLE;
  }

 private:
  const Context* ctx_ = nullptr;
  Handle handle_ = VK_NULL_HANDLE;
};

using UniqueBuffer = Unique<VkBuffer, &DeviceFns::vkDestroyBuffer>;
using UniqueMemory = Unique<VkDeviceMemory, &DeviceFns::vkFreeMemory>;
using UniqueShaderModule = Unique<VkShaderModule, &DeviceFns::vkDestroyShaderModule>;
using UniquePipelineLayout = Unique<VkPipelineLayout, &DeviceFns::vkDestroyPipelineLayout>;
using UniquePipeline = Unique<VkPipeline, &DeviceFns::vkDestroyPipeline>;
using UniquePipelineCache = Unique<VkPipelineCache, &DeviceFns::vkDestroyPipelineCache>;
using UniqueCommandPool = Unique<VkCommandPool, &DeviceFns::vkDestroyCommandPool>;
using UniqueSemaphore = Unique<VkSemaphore, &DeviceFns::vkDestroySemaphore>;
using UniqueQueryPool = Unique<VkQueryPool, &DeviceFns::vkDestroyQueryPool>;

/// A buffer bound to memory of its own with a device address: the building block of the memory
/// pool's blocks and of the staging rings.
struct BoundBuffer {
  UniqueMemory memory;
  UniqueBuffer buffer;
  VkDeviceAddress address = 0;
  VkDeviceSize bytes = 0;
  void* mapped = nullptr;  ///< host pointer when the memory is host-visible
};

/// Creates a storage/transfer buffer of `bytes` in memory type `type` (allocated with the
/// device-address flag) and maps it when `map`. Throws the failing call's error.
BoundBuffer create_bound_buffer(Context& ctx, VkDeviceSize bytes, uint32_t type, bool map);

/// The memory types allowed for such buffers (memoryTypeBits of their requirements).
uint32_t buffer_memory_type_bits(Context& ctx);

}  // namespace tessera::rt::vk
