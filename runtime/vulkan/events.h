/// \file Events: a timestamp query slot each (from growing query pools) plus the point in a
/// stream's submissions where the event completes (its timeline-semaphore value).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/backend.h"
#include "runtime/vulkan/context.h"

namespace tessera::rt::vk {

class VulkanStream;

/// Timestamp query slots, recycled when their event goes away. Where the device has
/// hostQueryReset, every free slot is reset from the host (new pools whole, released slots one
/// by one: an event goes away only after the GPU is done with it), so an event's first stamp needs
/// no vkCmdResetQueryPool in the command buffer. On the H200 that reset, recorded between a
/// kernel and its start or end stamp, added 3.9 us to every timed run (a one-program copy timed
/// 7.90 us with it, 3.97 without; CUDA 4.46).
class QueryPools {
 public:
  static constexpr uint32_t kPoolSize = 256;
  explicit QueryPools(std::shared_ptr<Context> ctx);

  struct Slot {
    VkQueryPool pool = VK_NULL_HANDLE;
    uint32_t index = 0;
  };
  Slot acquire();
  void release(Slot slot);
  /// Whether acquire() hands out slots already reset (hostQueryReset).
  bool host_reset() const { return host_reset_; }
  /// Whether the queue writes timestamps at all (timestampValidBits > 0).
  bool timestamps() const { return valid_bits_ > 0; }
  /// Milliseconds between two written timestamps (wrapping at the valid bits).
  double elapsed_ms(uint64_t start, uint64_t end) const;

 private:
  std::shared_ptr<Context> ctx_;
  uint32_t valid_bits_;
  bool host_reset_;
  std::mutex mutex_;
  std::vector<UniqueQueryPool> pools_;
  std::vector<Slot> free_;
};

class VulkanEvent : public EventImpl {
 public:
  explicit VulkanEvent(std::shared_ptr<QueryPools> pools)
      : pools_(std::move(pools)), slot_(pools_->acquire()), fresh_(pools_->host_reset()) {}
  ~VulkanEvent() override { pools_->release(slot_); }

  const QueryPools::Slot& slot() const { return slot_; }
  /// True the first time after the slot was reset from the host: the stamp about to be recorded
  /// needs no reset command. Later recordings reset the slot in the command buffer.
  bool take_fresh() { return fresh_.exchange(false); }

  /// Where the event completes: stream `stream`'s submission `value`.
  struct Mark {
    std::weak_ptr<VulkanStream> stream;
    uint64_t value = 0;
    bool recorded = false;
  };
  void set_mark(std::weak_ptr<VulkanStream> stream, uint64_t value) {
    std::lock_guard lock(mutex_);
    mark_ = {std::move(stream), value, true};
  }
  Mark mark() const {
    std::lock_guard lock(mutex_);
    return mark_;
  }

 private:
  std::shared_ptr<QueryPools> pools_;
  QueryPools::Slot slot_;
  std::atomic<bool> fresh_;
  mutable std::mutex mutex_;
  Mark mark_;
};

}  // namespace tessera::rt::vk
