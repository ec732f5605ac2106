/// \file The device-memory suballocator: first fit over per-block free lists, coalescing on
/// release, one empty shared block kept for reuse, dedicated blocks for large requests.
#include "runtime/vulkan/memory.h"

#include <algorithm>

namespace tessera::rt::vk {
namespace {

VkDeviceSize round_up(VkDeviceSize v, VkDeviceSize a) {
  return (v + a - 1) / a * a;
}

}  // namespace

int pick_memory_type(const VkPhysicalDeviceMemoryProperties& props, uint32_t type_bits,
                     VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer,
                     VkMemoryPropertyFlags avoid) {
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < props.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags flags = props.memoryTypes[i].propertyFlags;
    if (!(type_bits & (1u << i)) || (flags & want) != want) continue;
    int score = ((flags & prefer) == prefer ? 2 : 0) + ((flags & avoid) == 0 ? 1 : 0);
    if (score > best_score) {
      best = static_cast<int>(i);
      best_score = score;
    }
  }
  return best;
}

BoundBuffer create_host_buffer(Context& ctx, VkDeviceSize bytes, std::string_view what,
                               VkMemoryPropertyFlags prefer) {
  int type = pick_memory_type(
      ctx.facts().memory, buffer_memory_type_bits(ctx),
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, prefer, 0);
  if (type < 0)
    fail(ErrorKind::Runtime, ctx.name(), " has no host-visible coherent memory for ", what);
  return create_bound_buffer(ctx, bytes, static_cast<uint32_t>(type), /*map=*/true);
}

MemoryPool::MemoryPool(std::shared_ptr<Context> ctx, VkDeviceSize block_bytes)
    : ctx_(std::move(ctx)) {
  const PhysicalFacts& facts = ctx_->facts();
  uint32_t bits = buffer_memory_type_bits(*ctx_);
  int type = pick_memory_type(facts.memory, bits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0,
                              VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT);
  if (type < 0) type = pick_memory_type(facts.memory, bits, 0, 0, 0);
  if (type < 0) fail(ErrorKind::Runtime, ctx_->name(), " has no memory type for storage buffers");
  memory_type_ = static_cast<uint32_t>(type);
  VkDeviceSize heap = facts.memory.memoryHeaps[facts.memory.memoryTypes[type].heapIndex].size;
  // maxMemoryAllocationSize is advisory (NVIDIA allocates beyond it): only shared blocks respect
  // it; a dedicated block may be as large as a buffer can be, and the driver has the last word.
  max_allocation_ = std::min(facts.p13.maxBufferSize, heap);
  VkDeviceSize block_cap = std::min(max_allocation_, facts.p11.maxMemoryAllocationSize);
  block_bytes_ = std::max(kAlignment, std::min(block_bytes, block_cap) / kAlignment * kAlignment);
}

MemoryPool::~MemoryPool() = default;

MemoryPool::Block* MemoryPool::new_block(VkDeviceSize bytes, bool dedicated, size_t request) {
  auto block = std::make_unique<Block>();
  try {
    block->storage = create_bound_buffer(*ctx_, bytes, memory_type_, /*map=*/false);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::OutOfMemory) throw;
    VkDeviceSize in_use = 0;
    for (const auto& b : blocks_) in_use += b->storage.bytes;
    fail(ErrorKind::OutOfMemory, ctx_->name(), " (", ctx_->facts().device_name(),
         "): cannot allocate ", request, " bytes: out of device memory for a new ", bytes,
         "-byte block (", e.what(), "; ", in_use, " bytes already held in ", blocks_.size(),
         " blocks)");
  }
  ++vk_allocations_;
  block->dedicated = dedicated;
  block->free[0] = bytes;
  blocks_.push_back(std::move(block));
  return blocks_.back().get();
}

bool MemoryPool::take(Block& block, VkDeviceSize bytes, VkDeviceSize* offset) {
  for (auto it = block.free.begin(); it != block.free.end(); ++it) {
    if (it->second < bytes) continue;
    *offset = it->first;
    VkDeviceSize rest = it->second - bytes;
    block.free.erase(it);
    if (rest) block.free[*offset + bytes] = rest;
    block.used += bytes;
    return true;
  }
  return false;
}

std::shared_ptr<Allocation> MemoryPool::allocate(DeviceImpl* owner, size_t bytes) {
  ctx_->check_alive();
  VkDeviceSize reserved = round_up(std::max<VkDeviceSize>(bytes, 1), kAlignment);
  if (reserved > max_allocation_)
    fail(ErrorKind::OutOfMemory, ctx_->name(), " (", ctx_->facts().device_name(),
         "): cannot allocate ", bytes, " bytes: the device's largest buffer is ", max_allocation_,
         " bytes");
  std::lock_guard lock(mutex_);
  Block* block = nullptr;
  VkDeviceSize offset = 0;
  if (reserved > block_bytes_) {
    block = new_block(reserved, /*dedicated=*/true, bytes);
    take(*block, reserved, &offset);
  } else {
    for (auto& b : blocks_)
      if (!b->dedicated && take(*b, reserved, &offset)) {
        block = b.get();
        break;
      }
    if (!block) {
      block = new_block(block_bytes_, /*dedicated=*/false, bytes);
      take(*block, reserved, &offset);
    }
  }
  return std::make_shared<PoolAllocation>(owner, shared_from_this(), block, offset, reserved,
                                          bytes);
}

void MemoryPool::release(Block* block, VkDeviceSize offset, VkDeviceSize bytes) {
  std::lock_guard lock(mutex_);
  block->used -= bytes;
  auto [it, inserted] = block->free.emplace(offset, bytes);
  if (auto next = std::next(it);
      next != block->free.end() && it->first + it->second == next->first) {
    it->second += next->second;
    block->free.erase(next);
  }
  if (it != block->free.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      block->free.erase(it);
    }
  }
  if (block->used != 0) return;
  // Keep one empty shared block for the next allocations; give the rest back.
  bool other_empty = std::any_of(blocks_.begin(), blocks_.end(), [&](const auto& b) {
    return b.get() != block && !b->dedicated && b->used == 0;
  });
  if (!block->dedicated && !other_empty) return;
  blocks_.erase(std::find_if(blocks_.begin(), blocks_.end(),
                             [&](const auto& b) { return b.get() == block; }));
}

MemoryPool::Stats MemoryPool::stats() const {
  std::lock_guard lock(mutex_);
  Stats s;
  s.blocks = blocks_.size();
  for (const auto& b : blocks_) {
    s.reserved_bytes += b->storage.bytes;
    s.used_bytes += b->used;
  }
  s.vk_allocations = vk_allocations_;
  return s;
}

PoolAllocation::PoolAllocation(DeviceImpl* owner, std::shared_ptr<MemoryPool> pool,
                               MemoryPool::Block* block, VkDeviceSize offset, VkDeviceSize reserved,
                               size_t bytes)
    : Allocation(owner, block->storage.address + offset, bytes),
      pool_(std::move(pool)),
      block_(block),
      offset_(offset),
      reserved_(reserved) {}

PoolAllocation::PoolAllocation(DeviceImpl* owner, VkBuffer buffer, VkDeviceAddress base,
                               VkDeviceSize offset, size_t bytes)
    : Allocation(owner, base + offset, bytes),
      block_(nullptr),
      offset_(offset),
      reserved_(0),
      external_(buffer) {}

PoolAllocation::~PoolAllocation() {
  if (pool_) pool_->release(block_, offset_, reserved_);
}

VkBuffer PoolAllocation::buffer() const {
  return external_ ? external_ : block_->storage.buffer.get();
}

}  // namespace tessera::rt::vk
