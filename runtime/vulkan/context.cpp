/// \file Creating the logical device and its queue, buffers bound to their own memory, and the
/// device-lost state that fails all later calls.
#include "runtime/vulkan/context.h"

#include <cstdio>
#include <vector>

#include "runtime/timeout.h"

namespace tessera::rt::vk {
namespace {

constexpr VkBufferUsageFlags kBufferUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
    VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;

}  // namespace

Context::Context(std::shared_ptr<Instance> instance, PhysicalFacts facts, std::string name)
    : instance_(std::move(instance)), facts_(std::move(facts)), name_(std::move(name)) {
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = facts_.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  FeatureSet features = facts_.enabled_features();
  std::vector<const char*> extensions = facts_.enabled_extensions();
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = features.chain();
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkResult r = instance_->fns().vkCreateDevice(facts_.handle, &info, nullptr, &device_);
  if (r != VK_SUCCESS) {
    device_ = VK_NULL_HANDLE;
    fail(error_kind(r), name_, " (", facts_.device_name(),
         "): ", describe_failure("vkCreateDevice", r));
  }
  std::string missing;
  fns_ = Loader::load_device(instance_->fns(), device_, &missing);
  if (!missing.empty()) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDevice>(
        instance_->fns().vkGetDeviceProcAddr(device_, "vkDestroyDevice"));
    if (destroy) destroy(device_, nullptr);
    device_ = VK_NULL_HANDLE;
    fail(ErrorKind::Runtime, name_, " (", facts_.device_name(), ") lacks ", missing);
  }
  fns_.vkGetDeviceQueue(device_, facts_.queue_family, 0, &queue_);
}

Context::~Context() {
  if (device_ == VK_NULL_HANDLE || abandoned_.load()) return;
  {
    std::lock_guard lock(queue_mutex_);
    release_hang();
  }
  // A device that stopped answering keeps its VkDevice: waiting for it would never end, and
  // destroying it under running work is undefined.
  if (hung_.load() && hang_ == VK_NULL_HANDLE) return;
  fns_.vkDeviceWaitIdle(device_);
  for (const auto& destroy : deferred_) destroy(fns_, device_);
  if (hang_ != VK_NULL_HANDLE) fns_.vkDestroySemaphore(device_, hang_, nullptr);
  fns_.vkDestroyDevice(device_, nullptr);
  // Messages no synchronizing call reported (objects left at destruction, say) still get a reader.
  if (!instance_->validation()) return;
  if (auto late = instance_->log().take_unreported())
    std::fprintf(stderr, "tessera: Vulkan validation on %s: %s\n", name_.c_str(), late->c_str());
}

VkResult Context::submit(const VkSubmitInfo2& info) {
  std::lock_guard lock(queue_mutex_);
  if (!inject_hang_.exchange(false)) return fns_.vkQueueSubmit2(queue_, 1, &info, VK_NULL_HANDLE);
  if (hang_ == VK_NULL_HANDLE) {
    VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo create{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    create.pNext = &type;
    check(fns_.vkCreateSemaphore(device_, &create, nullptr, &hang_), "vkCreateSemaphore");
  }
  std::vector<VkSemaphoreSubmitInfo> waits(info.pWaitSemaphoreInfos,
                                           info.pWaitSemaphoreInfos + info.waitSemaphoreInfoCount);
  waits.push_back({VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, hang_, 1,
                   VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, 0});
  VkSubmitInfo2 hung = info;
  hung.waitSemaphoreInfoCount = static_cast<uint32_t>(waits.size());
  hung.pWaitSemaphoreInfos = waits.data();
  return fns_.vkQueueSubmit2(queue_, 1, &hung, VK_NULL_HANDLE);
}

void Context::release_hang() {
  if (hang_ == VK_NULL_HANDLE) return;
  VkSemaphoreSignalInfo signal{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
  signal.semaphore = hang_;
  signal.value = 1;
  uint64_t now = 0;
  if (fns_.vkGetSemaphoreCounterValue(device_, hang_, &now) == VK_SUCCESS && now < 1)
    fns_.vkSignalSemaphore(device_, &signal);
}

void Context::wait_idle_quietly() {
  if (abandoned_.load()) return;
  std::lock_guard lock(queue_mutex_);
  release_hang();
  if (hung_.load() && hang_ == VK_NULL_HANDLE) return;  // it would never return
  fns_.vkQueueWaitIdle(queue_);
}

VkResult Context::wait_semaphore(VkSemaphore semaphore, uint64_t value, double* seconds) {
  *seconds = timeout_seconds();
  const uint64_t slice =
      *seconds > 0 && *seconds < 1.8e10 ? static_cast<uint64_t>(*seconds * 1e9) : UINT64_MAX;
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore;
  info.pValues = &value;
  uint64_t seen = 0;
  fns_.vkGetSemaphoreCounterValue(device_, semaphore, &seen);
  for (;;) {
    VkResult r = filter_wait_result(fns_.vkWaitSemaphores(device_, &info, slice));
    if (r != VK_TIMEOUT) return r;
    uint64_t now = 0;
    r = filter_wait_result(fns_.vkGetSemaphoreCounterValue(device_, semaphore, &now));
    if (r < 0) return r;
    if (now >= value) return VK_SUCCESS;
    if (now == seen) return VK_TIMEOUT;  // nothing finished in a whole slice
    seen = now;
  }
}

void Context::mark_hung(const std::string& why) {
  hung_.store(true);
  mark_lost(why);
}

void Context::check(VkResult result, std::string_view call, std::string_view kernel) {
  if (result >= 0) return;
  std::string what = describe_failure(call, result, kernel) + " on " + name_;
  if (result == VK_ERROR_DEVICE_LOST) mark_lost(what);
  throw Error(error_kind(result), what);
}

void Context::check_alive() const {
  if (!lost_.load()) return;
  fail(ErrorKind::DeviceFault, name_, " (", facts_.device_name(),
       ") was lost and cannot run more work: ", lost_reason());
}

void Context::defer_destroy(std::function<void(const DeviceFns&, VkDevice)> destroy) const {
  std::lock_guard lock(deferred_mutex_);
  deferred_.push_back(std::move(destroy));
}

void Context::abandon() {
  mark_lost(
      "the device was closed when the device registry was destroyed at process exit (a "
      "static kernel, buffer or stream used during exit?)");
  abandoned_.store(true);
}

void Context::mark_lost(const std::string& why) {
  std::lock_guard lock(lost_mutex_);
  if (lost_.load()) return;
  lost_reason_ = why;
  lost_.store(true);
}

std::string Context::lost_reason() const {
  std::lock_guard lock(lost_mutex_);
  return lost_reason_;
}

void Context::check_validation() {
  if (!instance_->validation()) return;
  if (auto messages = instance_->log().take_unreported())
    fail(ErrorKind::Internal, "Vulkan validation on ", name_, ": ", *messages);
}

VkResult Context::filter_wait_result(VkResult result) {
  if (result >= 0 && inject_lost_.exchange(false)) return VK_ERROR_DEVICE_LOST;
  return result;
}

uint32_t buffer_memory_type_bits(Context& ctx) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = 4096;
  info.usage = kBufferUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer raw = VK_NULL_HANDLE;
  ctx.check(ctx.fns().vkCreateBuffer(ctx.device(), &info, nullptr, &raw), "vkCreateBuffer");
  UniqueBuffer probe(&ctx, raw);
  VkMemoryRequirements req;
  ctx.fns().vkGetBufferMemoryRequirements(ctx.device(), probe.get(), &req);
  return req.memoryTypeBits;
}

BoundBuffer create_bound_buffer(Context& ctx, VkDeviceSize bytes, uint32_t type, bool map) {
  const DeviceFns& f = ctx.fns();
  BoundBuffer b;
  b.bytes = bytes;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = bytes;
  info.usage = kBufferUsage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  ctx.check(f.vkCreateBuffer(ctx.device(), &info, nullptr, &buffer), "vkCreateBuffer");
  b.buffer = UniqueBuffer(&ctx, buffer);

  VkMemoryRequirements req;
  f.vkGetBufferMemoryRequirements(ctx.device(), buffer, &req);
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.pNext = &flags;
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  ctx.check(f.vkAllocateMemory(ctx.device(), &alloc, nullptr, &memory), "vkAllocateMemory");
  b.memory = UniqueMemory(&ctx, memory);
  ctx.check(f.vkBindBufferMemory(ctx.device(), buffer, memory, 0), "vkBindBufferMemory");

  VkBufferDeviceAddressInfo address{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
  address.buffer = buffer;
  b.address = f.vkGetBufferDeviceAddress(ctx.device(), &address);
  if (map)
    ctx.check(f.vkMapMemory(ctx.device(), memory, 0, VK_WHOLE_SIZE, 0, &b.mapped), "vkMapMemory");
  return b;
}

}  // namespace tessera::rt::vk
