/// \file Timestamp query pools: slots handed out to events, pools added as events multiply.
#include "runtime/vulkan/events.h"

namespace tessera::rt::vk {

QueryPools::QueryPools(std::shared_ptr<Context> ctx)
    : ctx_(std::move(ctx)),
      valid_bits_(ctx_->facts().timestamp_valid_bits),
      host_reset_(ctx_->facts().supported.v12.hostQueryReset == VK_TRUE) {}

QueryPools::Slot QueryPools::acquire() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) {
    VkQueryPoolCreateInfo info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = kPoolSize;
    VkQueryPool pool = VK_NULL_HANDLE;
    ctx_->check(ctx_->fns().vkCreateQueryPool(ctx_->device(), &info, nullptr, &pool),
                "vkCreateQueryPool");
    pools_.emplace_back(ctx_.get(), pool);
    if (host_reset_) ctx_->fns().vkResetQueryPool(ctx_->device(), pool, 0, kPoolSize);
    for (uint32_t i = kPoolSize; i-- > 0;) free_.push_back({pool, i});
  }
  Slot s = free_.back();
  free_.pop_back();
  return s;
}

void QueryPools::release(Slot slot) {
  if (host_reset_ && !ctx_->abandoned())
    ctx_->fns().vkResetQueryPool(ctx_->device(), slot.pool, slot.index, 1);
  std::lock_guard lock(mutex_);
  free_.push_back(slot);
}

double QueryPools::elapsed_ms(uint64_t start, uint64_t end) const {
  uint64_t mask = valid_bits_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << valid_bits_) - 1;
  uint64_t ticks = (end - start) & mask;
  return static_cast<double>(ticks) * ctx_->limits().timestampPeriod * 1e-6;
}

}  // namespace tessera::rt::vk
