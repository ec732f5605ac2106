/// \file The fault channel of Vulkan kernels (target::FaultWords): each stream owns host-visible
/// records, one slot per launch with a channel (reused after kFaultSlots launches, once the launch
/// that used it has been collected), whose address goes into the launch's parameter block with a
/// tag naming the launch. A kernel cannot trap, so a failing invocation fills the record and the
/// launch runs to its end. Once its submission has finished the stream reads the slot; a fault is
/// owed to the thread that launched the kernel, and that thread's next wait on the stream throws
/// ErrorKind::DeviceFault naming the kernel, its fault and the failing invocation. Other threads'
/// work is not affected: the device stays usable and later work runs as usual. A launch captured
/// in a graph gets a slot of the graph's own records instead, read after each replay.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>
#include <span>
#include <string>

#include "core/support/fault_text.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/stream.h"

namespace tessera::rt::vk {
void VulkanStream::attach_fault_record(const std::shared_ptr<const VulkanKernel>& k,
                                       std::span<std::byte> params) {
  if (k->fault_offset() < 0) return;
  if (capturing()) return attach_graph_fault_record(k, params);
  Context& ctx = *shared_.ctx;
  constexpr VkDeviceSize kBytes = VkDeviceSize{kFaultSlots} * sizeof(target::FaultWords);
  if (!fault_records_) {
    fault_records_ = std::make_unique<BoundBuffer>(
        create_host_buffer(ctx, kBytes, "the fault records of kernel " + k->name));
    std::memset(fault_records_->mapped, 0, kBytes);
  }
  // Every slot is in use by a launch not yet collected: wait for the oldest one's submission.
  if (fault_sources_.size() >= kFaultSlots) {
    uint64_t oldest = fault_sources_.front().value;
    if (oldest > submitted_) submit_locked();
    wait_locked(oldest);
  }
  uint32_t tag = ++fault_tag_;
  uint64_t address =
      fault_records_->address + VkDeviceSize{tag % kFaultSlots} * sizeof(target::FaultWords);
  size_t at = static_cast<size_t>(k->fault_offset());
  TESSERA_CHECK(at + 12 <= params.size(), "kernel ", k->name, ": fault channel past the block");
  std::memcpy(params.data() + at, &address, sizeof address);
  std::memcpy(params.data() + at + 8, &tag, sizeof tag);
  fault_sources_.push_back({tag, submitted_ + 1, k, std::this_thread::get_id()});
  batch_.host_read = true;  // the slot is read by the host once the batch is done
}

void VulkanStream::attach_graph_fault_record(const std::shared_ptr<const VulkanKernel>& k,
                                             std::span<std::byte> params) {
  constexpr uint32_t kBlockSlots = 64;
  constexpr VkDeviceSize kBytes = VkDeviceSize{kBlockSlots} * sizeof(target::FaultWords);
  if (!capture_fault_block_ || capture_fault_used_ == kBlockSlots) {
    capture_fault_block_ = std::make_shared<BoundBuffer>(
        create_host_buffer(*shared_.ctx, kBytes, "the fault records of a graph"));
    std::memset(capture_fault_block_->mapped, 0, kBytes);
    capture_fault_used_ = 0;
  }
  const uint32_t index = capture_fault_used_++;
  const uint32_t tag = index + 1;  // the slot is this launch's alone: any tag but 0 will do
  uint64_t address =
      capture_fault_block_->address + VkDeviceSize{index} * sizeof(target::FaultWords);
  size_t at = static_cast<size_t>(k->fault_offset());
  TESSERA_CHECK(at + 12 <= params.size(), "kernel ", k->name, ": fault channel past the block");
  std::memcpy(params.data() + at, &address, sizeof address);
  std::memcpy(params.data() + at + 8, &tag, sizeof tag);
  capture_fault_slots_.push_back({capture_fault_block_, index, k});
  batch_.host_read = true;  // the slot is read by the host once a replay is done
}

namespace {

/// Reads the fault record at `slot`; a claimed one is cleared and returned as its message.
std::optional<std::string> take_fault(std::byte* slot, const VulkanKernel& kernel,
                                      const std::string& device) {
  target::FaultWords w;
  std::memcpy(&w, slot, sizeof w);
  if (w.claimed == 0) return std::nullopt;
  std::memset(slot, 0, sizeof w);
  const auto& faults = kernel.faults();
  const size_t n = std::min<size_t>(w.num_values, std::size(w.values));
  std::string text =
      w.code >= 1 && w.code <= faults.size()
          ? format_assert_message(faults[w.code - 1], std::span<const uint64_t>(w.values, n))
          : "kernel " + kernel.name + " reported fault code " + std::to_string(w.code);
  return text + " (" + describe_invocation(w.program, w.thread, w.rank, w.index) + ") on " + device;
}

}  // namespace

void VulkanStream::collect_fault_locked() {
  while (!fault_sources_.empty() && fault_sources_.front().value <= completed_) {
    const FaultSource& s = fault_sources_.front();
    std::byte* slot = static_cast<std::byte*>(fault_records_->mapped) +
                      size_t{s.tag % kFaultSlots} * sizeof(target::FaultWords);
    if (std::optional<std::string> text = take_fault(slot, *s.kernel, shared_.ctx->name()))
      owed_.push_back({s.thread, std::move(*text)});
    fault_sources_.pop_front();
  }
  while (!graph_checks_.empty() && graph_checks_.front().value <= completed_) {
    const GraphCheck& c = graph_checks_.front();
    for (const GraphFaultSlot& s : c.graph->fault_slots()) {
      std::byte* slot =
          static_cast<std::byte*>(s.block->mapped) + size_t{s.index} * sizeof(target::FaultWords);
      if (std::optional<std::string> text = take_fault(slot, *s.kernel, shared_.ctx->name()))
        owed_.push_back({c.thread, std::move(*text)});
    }
    graph_checks_.pop_front();
  }
}

void VulkanStream::throw_fault_locked() {
  collect_fault_locked();
  auto it = std::find_if(owed_.begin(), owed_.end(),
                         [](const OwedFault& f) { return f.thread == std::this_thread::get_id(); });
  if (it == owed_.end()) return;
  std::string why = std::move(it->text);
  owed_.erase(it);
  throw Error(ErrorKind::DeviceFault, why);
}

}  // namespace tessera::rt::vk
