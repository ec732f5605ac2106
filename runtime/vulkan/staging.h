/// \file A stream's persistent staging ring: host-visible, coherent memory with a device address,
/// carved into regions in stream order. Uploads stage their bytes here at enqueue time, downloads
/// land here, and launches whose parameters do not fit in push constants put them here (the
/// device-address param ring). A region is free again once the submission that used it is done.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "runtime/vulkan/context.h"

namespace tessera::rt::vk {

class StagingRing {
 public:
  static constexpr VkDeviceSize kAlignment = 256;

  StagingRing(std::shared_ptr<Context> ctx, VkDeviceSize bytes);

  struct Region {
    VkDeviceSize offset = 0;  ///< in buffer()
    VkDeviceSize bytes = 0;
    std::byte* host = nullptr;  ///< mapped, coherent
    VkDeviceAddress address = 0;
  };
  /// A region for work of submission `ticket` (tickets never decrease), or nullopt when the ring
  /// has no room until older submissions finish. `bytes` must be at most capacity().
  std::optional<Region> try_allocate(VkDeviceSize bytes, uint64_t ticket);
  /// Frees the regions of submissions up to `completed`.
  void retire(uint64_t completed);
  /// The ticket of the oldest region in use (0 when the ring is empty).
  uint64_t oldest_ticket() const { return used_.empty() ? 0 : used_.front().ticket; }

  VkBuffer buffer() const { return storage_.buffer.get(); }
  VkDeviceSize capacity() const { return storage_.bytes; }

 private:
  struct Used {
    VkDeviceSize begin, end;
    uint64_t ticket;
  };
  std::shared_ptr<Context> ctx_;
  BoundBuffer storage_;
  std::deque<Used> used_;  // in allocation order
};

}  // namespace tessera::rt::vk
