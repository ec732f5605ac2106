/// \file The staging ring: host-visible memory chosen for fast host reads (cached when possible),
/// regions allocated at the head and freed at the tail as submissions complete.
#include "runtime/vulkan/staging.h"

#include "runtime/vulkan/memory.h"

namespace tessera::rt::vk {

StagingRing::StagingRing(std::shared_ptr<Context> ctx, VkDeviceSize bytes) : ctx_(std::move(ctx)) {
  bytes = std::max(kAlignment, bytes / kAlignment * kAlignment);
  storage_ = create_host_buffer(*ctx_, bytes, "staging", VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
}

std::optional<StagingRing::Region> StagingRing::try_allocate(VkDeviceSize bytes, uint64_t ticket) {
  bytes = (std::max<VkDeviceSize>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  VkDeviceSize cap = capacity(), begin = 0;
  if (bytes > cap) return std::nullopt;
  if (!used_.empty()) {
    VkDeviceSize tail = used_.front().begin, head = used_.back().end;
    if (head > tail) {  // in use: [tail, head); free: [head, cap) and [0, tail)
      if (cap - head >= bytes)
        begin = head;
      else if (tail >= bytes)
        begin = 0;
      else
        return std::nullopt;
    } else {  // wrapped; in use: [tail, cap) and [0, head); free: [head, tail)
      if (tail - head < bytes) return std::nullopt;
      begin = head;
    }
  }
  used_.push_back({begin, begin + bytes, ticket});
  Region r;
  r.offset = begin;
  r.bytes = bytes;
  r.host = static_cast<std::byte*>(storage_.mapped) + begin;
  r.address = storage_.address + begin;
  return r;
}

void StagingRing::retire(uint64_t completed) {
  while (!used_.empty() && used_.front().ticket <= completed) used_.pop_front();
}

}  // namespace tessera::rt::vk
