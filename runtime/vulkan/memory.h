/// \file Device memory: a suballocator over large device-local blocks, so that a buffer costs an
/// offset range, not a vkAllocateMemory. Each block is one VkBuffer whose device address is the
/// block's base; an allocation's address is base + offset. Requests larger than a block get a
/// dedicated block. Free ranges are kept per block, coalesced on release, 256-byte aligned.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "runtime/backend.h"
#include "runtime/vulkan/context.h"

namespace tessera::rt::vk {

class MemoryPool : public std::enable_shared_from_this<MemoryPool> {
 public:
  static constexpr VkDeviceSize kAlignment = 256;

  /// `block_bytes` is the size of a shared block (capped by the device's allocation limits).
  MemoryPool(std::shared_ptr<Context> ctx, VkDeviceSize block_bytes);
  ~MemoryPool();

  /// A range of at least `bytes` (OutOfMemory naming the size and the device when impossible).
  std::shared_ptr<Allocation> allocate(DeviceImpl* owner, size_t bytes);

  struct Stats {
    size_t blocks = 0;                ///< live blocks (shared and dedicated)
    VkDeviceSize reserved_bytes = 0;  ///< device memory held by the blocks
    VkDeviceSize used_bytes = 0;      ///< bytes in live allocations (rounded to the alignment)
    uint64_t vk_allocations = 0;      ///< vkAllocateMemory calls so far
  };
  Stats stats() const;
  VkDeviceSize block_bytes() const { return block_bytes_; }

 private:
  friend class PoolAllocation;
  struct Block {
    BoundBuffer storage;
    bool dedicated = false;
    std::map<VkDeviceSize, VkDeviceSize> free;  ///< offset -> size, coalesced
    VkDeviceSize used = 0;
  };

  Block* new_block(VkDeviceSize bytes, bool dedicated, size_t request);
  static bool take(Block& block, VkDeviceSize bytes, VkDeviceSize* offset);
  void release(Block* block, VkDeviceSize offset, VkDeviceSize bytes);

  std::shared_ptr<Context> ctx_;
  VkDeviceSize block_bytes_;
  VkDeviceSize max_allocation_;
  uint32_t memory_type_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Block>> blocks_;
  uint64_t vk_allocations_ = 0;
};

/// A range of a pool block, returned to the pool when the last reference goes; or a range of a
/// VkBuffer the caller owns (Device::wrap_vk_buffer), which is never freed here.
class PoolAllocation : public Allocation {
 public:
  PoolAllocation(DeviceImpl* owner, std::shared_ptr<MemoryPool> pool, MemoryPool::Block* block,
                 VkDeviceSize offset, VkDeviceSize reserved, size_t bytes);
  /// `bytes` from `offset` of the caller's `buffer`, whose device address is `base`.
  PoolAllocation(DeviceImpl* owner, VkBuffer buffer, VkDeviceAddress base, VkDeviceSize offset,
                 size_t bytes);
  ~PoolAllocation() override;
  VkBuffer buffer() const;
  std::pair<uint64_t, uint64_t> vk_buffer() const override {
    return {reinterpret_cast<uint64_t>(buffer()), offset_};
  }
  /// Offset of the allocation's first byte in buffer().
  VkDeviceSize buffer_offset() const { return offset_; }

 private:
  std::shared_ptr<MemoryPool> pool_;
  MemoryPool::Block* block_;
  VkDeviceSize offset_;
  VkDeviceSize reserved_;
  VkBuffer external_ = VK_NULL_HANDLE;  ///< the caller's VkBuffer; pool_ is null then
};

/// The index of the memory type for `type_bits` with `want` flags, preferring also `prefer`
/// flags and avoiding `avoid` flags; -1 if none has `want`.
int pick_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t type_bits,
                     VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer,
                     VkMemoryPropertyFlags avoid);

/// A mapped buffer of `bytes` in host-visible coherent memory (with `prefer` flags where a type
/// has them) for the host to read what kernels write; Runtime error "<device> has no host-visible
/// coherent memory for <what>" where the device has none.
BoundBuffer create_host_buffer(Context& ctx, VkDeviceSize bytes, std::string_view what,
                               VkMemoryPropertyFlags prefer = 0);

}  // namespace tessera::rt::vk
