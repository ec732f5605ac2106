/// \file Vulkan streams: work is recorded into the stream's open command buffer (a batch) and
/// submitted when the batch is large, when the GPU went idle, or when someone must wait (a
/// synchronize, a download, an event, a full staging ring). A barrier goes only before a command
/// that touches an allocation an earlier command of the batch touched (kernels do not say what
/// they read or write, so any shared allocation counts). Submissions signal the stream's timeline
/// semaphore; nothing waits on the queue per command.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/backend.h"
#include "runtime/vulkan/events.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/staging.h"

namespace tessera::rt::vk {

/// The internal compute kernels for fills and copies (GLSL in runtime/vulkan/shaders/).
struct UtilityKernels {
  std::shared_ptr<VulkanKernel> fill;       ///< 16-byte words from a repeating pattern
  std::shared_ptr<VulkanKernel> copy_vec4;  ///< 16-byte words, both sides 16-byte aligned
  std::shared_ptr<VulkanKernel> copy_u32;   ///< 4-byte words, both sides 4-byte aligned
};

/// What a stream needs of its device; shared, so a stream may outlive the device handle.
struct DeviceShared {
  DeviceImpl* owner = nullptr;
  std::shared_ptr<Context> ctx;
  std::shared_ptr<MemoryPool> memory;
  std::shared_ptr<QueryPools> queries;
  std::shared_ptr<const UtilityKernels> utils;
  VkDeviceSize staging_bytes = 0;
};

/// A timeline semaphore, shared with the streams that wait on it.
class TimelineSemaphore {
 public:
  explicit TimelineSemaphore(std::shared_ptr<Context> ctx);
  /// Drains the queue first where another stream's submission waited on it (mark_waited).
  ~TimelineSemaphore();
  TimelineSemaphore(const TimelineSemaphore&) = delete;
  TimelineSemaphore& operator=(const TimelineSemaphore&) = delete;
  VkSemaphore handle() const { return semaphore_.get(); }
  /// A submission of another stream waits on this semaphore (an event's cross-stream order).
  /// The destructor then waits for the queue to go idle: with Mesa 22.3's lavapipe, destroying it
  /// as soon as the waiting submission's own signal was seen crashed lavapipe's submit thread in
  /// a list append into freed memory (about once in 50 runs of the threaded ordering test; none
  /// in 800 with the drain), which reads as the submit thread releasing the wait's timeline
  /// point after that signal. The spec allows the earlier destruction; the drain is cheap where
  /// streams are destroyed rarely.
  void mark_waited() { waited_.store(true, std::memory_order_relaxed); }

 private:
  std::shared_ptr<Context> ctx_;
  UniqueSemaphore semaphore_;
  std::atomic<bool> waited_{false};
};

/// The fault record of one launch in a graph (fault.cpp): its own slot in a block of slots the
/// graph holds, read after each replay.
struct GraphFaultSlot {
  std::shared_ptr<BoundBuffer> block;  ///< host-visible target::FaultWords slots
  uint32_t index = 0;                  ///< the launch's slot in `block`
  std::shared_ptr<const VulkanKernel> kernel;
};

/// Launches recorded into one command buffer (Stream::capture on Vulkan), with the barriers the
/// stream's rule put between dependent ones: each replay is one vkQueueSubmit2. The graph owns
/// its command pool, the buffers and kernels of its launches.
class VulkanGraph final : public BackendGraph<VulkanGraph, VulkanStream> {
 public:
  VulkanGraph(DeviceImpl* device, std::shared_ptr<Context> ctx, UniqueCommandPool pool,
              VkCommandBuffer cmd, std::vector<std::shared_ptr<const void>> keep,
              std::vector<std::string> kernels, std::vector<GraphFaultSlot> fault_slots,
              size_t launches)
      : device_(device),
        ctx_(std::move(ctx)),
        pool_(std::move(pool)),
        cmd_(cmd),
        keep_(std::move(keep)),
        kernels_(std::move(kernels)),
        fault_slots_(std::move(fault_slots)),
        launches_(launches) {}
  DeviceImpl* device() const override { return device_; }
  size_t launches() const override { return launches_; }
  /// The recorded command buffer (null when nothing was captured).
  VkCommandBuffer cmd() const { return cmd_; }
  const std::vector<std::string>& kernels() const { return kernels_; }
  /// The fault records of the launches that have a fault channel.
  const std::vector<GraphFaultSlot>& fault_slots() const { return fault_slots_; }

 private:
  DeviceImpl* device_;
  std::shared_ptr<Context> ctx_;  // declared first: destroyed after the pool
  UniqueCommandPool pool_;
  VkCommandBuffer cmd_;
  std::vector<std::shared_ptr<const void>> keep_;
  std::vector<std::string> kernels_;
  std::vector<GraphFaultSlot> fault_slots_;
  size_t launches_;
};

class VulkanStream final : public StreamImpl, public std::enable_shared_from_this<VulkanStream> {
 public:
  /// Commands per batch before it is submitted regardless.
  static constexpr size_t kMaxBatchCommands = 128;
  /// Commands after which a batch is submitted early when the GPU has nothing to do.
  static constexpr size_t kIdleSubmitCommands = 16;

  explicit VulkanStream(DeviceShared shared);
  ~VulkanStream() override;

  DeviceImpl* device() const override { return shared_.owner; }
  void launch(std::shared_ptr<const CompiledKernel> kernel, Grid grid,
              std::vector<std::byte> params,
              std::vector<std::shared_ptr<Allocation>> keep_alive) override;
  void launch_packed(const std::shared_ptr<const CompiledKernel>& kernel, Grid grid,
                     std::span<const std::byte> params,
                     std::span<std::shared_ptr<Allocation>> keep_alive) override;
  /// Capture: the launches are recorded into a command buffer of the graph's own pool (opened
  /// after the stream's open batch is submitted), never submitted by the stream.
  void begin_capture() override;
  std::shared_ptr<GraphImpl> end_capture() override;
  void abandon_capture() override;
  /// Submits `graph`'s command buffer after the stream's earlier work (one vkQueueSubmit2).
  void replay_graph(const std::shared_ptr<VulkanGraph>& graph);
  void upload(std::shared_ptr<Allocation> dst, size_t offset, const void* src,
              size_t bytes) override;
  void download(std::shared_ptr<Allocation> src, size_t offset, void* dst, size_t bytes) override;
  void fill(std::shared_ptr<Allocation> dst, size_t offset, size_t bytes, const void* pattern,
            size_t pattern_bytes) override;
  void copy(std::shared_ptr<Allocation> dst, size_t dst_offset, std::shared_ptr<Allocation> src,
            size_t src_offset, size_t bytes) override;
  void record(std::shared_ptr<EventImpl> event) override;
  void wait(std::shared_ptr<EventImpl> event) override;
  void synchronize() override;

  /// Waits until this stream's submission `value` has finished (submitting it first if it is
  /// still the open batch).
  void wait_for(uint64_t value);
  /// Submits the open batch if `value` belongs to it.
  void flush_through(uint64_t value);
  const std::shared_ptr<TimelineSemaphore>& semaphore() const { return semaphore_; }

 private:
  struct Touch {
    uint64_t op = 0;                    ///< the operation that last touched the allocation
    VkPipelineStageFlags2 ordered = 0;  ///< stages already ordered after it by a barrier
  };
  struct Batch {
    VkCommandBuffer cmd = VK_NULL_HANDLE;  ///< null while no batch is open
    size_t commands = 0;
    VkPipelineStageFlags2 stages = 0;  ///< stages used so far
    bool host_read = false;            ///< the host reads results: end with a host barrier
    VkPipeline bound = VK_NULL_HANDLE;
    std::unordered_map<const Allocation*, Touch> touched;
    std::vector<std::shared_ptr<const void>> keep;
    std::vector<std::string> kernels;
    std::vector<std::pair<std::shared_ptr<TimelineSemaphore>, uint64_t>> waits;
  };
  struct Submission {
    uint64_t value;
    VkCommandBuffer cmd;  ///< the stream's (reused after it finishes), or a graph's
    std::vector<std::shared_ptr<const void>> keep;
    std::vector<std::string> kernels;
    bool reuse = true;  ///< false: a graph's command buffer, not the stream's to reuse
  };
  struct Span {
    const PoolAllocation* alloc;
    VkDeviceSize offset;  ///< in the allocation
  };

  // Batches and submissions (stream.cpp). The caller holds mutex_.
  VkCommandBuffer begin_op(std::span<const Allocation* const> allocs, VkPipelineStageFlags2 stage);
  void record_dispatch(VkCommandBuffer cmd, const VulkanKernel& k, const uint32_t groups[3],
                       const void* push);
  void note_kernel(const std::string& name);
  void maybe_submit();
  void submit_locked();
  /// Submits `cmd` (ended) after the stream's previous submission and the open batch's waits.
  void submit_cmd_locked(VkCommandBuffer cmd, std::vector<std::shared_ptr<const void>> keep,
                         std::vector<std::string> kernels, bool reuse);
  void wait_locked(uint64_t value);
  void retire_locked();
  [[noreturn]] void fail_lost(std::string_view call);
  StagingRing& ring();
  StagingRing::Region stage_locked(VkDeviceSize bytes);

  // The fault channel (fault.cpp; target::FaultWords). The caller holds mutex_.
  /// Writes the stream's record address and a fresh tag into a launch's `params` when `k` has a
  /// fault channel, and remembers which kernel the tag names.
  void attach_fault_record(const std::shared_ptr<const VulkanKernel>& k,
                           std::span<std::byte> params);
  /// In a capture: gives the launch a slot of the graph's own fault records.
  void attach_graph_fault_record(const std::shared_ptr<const VulkanKernel>& k,
                                 std::span<std::byte> params);
  /// Reads the slots of the launches whose submissions have finished: a claimed one becomes a
  /// fault owed to the launching thread, and the slot is cleared.
  void collect_fault_locked();
  /// Throws (ErrorKind::DeviceFault) the first fault owed to the calling thread, if any.
  void throw_fault_locked();

  // Device print (print.cpp; target::Artifact::PrintRecord). The caller holds mutex_.
  /// Writes the stream's print buffer's address, capacity and a fresh tag into a launch's
  /// `params` when `k` prints. The buffer holds the records of one submission: a print launch
  /// after one in an earlier submission waits for that submission (and its records) first.
  void attach_print_buffer(const std::shared_ptr<const VulkanKernel>& k,
                           std::span<std::byte> params);
  /// Writes the records of the print launches whose submissions have finished to stdout (in the
  /// order documented in print.cpp), and the dropped records' count to stderr; then empties the
  /// buffer when no submitted launch still writes to it.
  void collect_print_locked();

  // Transfers (transfer.cpp). The caller holds mutex_.
  const PoolAllocation& pool_allocation(const Allocation& a, const char* what) const;
  void copy_locked(Span dst, Span src, VkDeviceSize bytes);
  void dispatch_words(const VulkanKernel& k, VkCommandBuffer cmd, VkDeviceAddress dst,
                      VkDeviceAddress src, uint64_t words, const std::vector<uint32_t>& pattern);

  DeviceShared shared_;
  std::mutex mutex_;
  UniqueCommandPool pool_;
  std::shared_ptr<TimelineSemaphore> semaphore_;
  std::unique_ptr<StagingRing> ring_;
  std::vector<VkCommandBuffer> free_cmds_;
  Batch batch_;
  std::deque<Submission> in_flight_;
  uint64_t submitted_ = 0;  ///< the last submitted value (the open batch will be submitted_ + 1)
  uint64_t completed_ = 0;  ///< the last value known finished
  /// Fault records: one slot per launch with a channel, reused after kFaultSlots launches.
  static constexpr uint32_t kFaultSlots = 256;
  struct FaultSource {
    uint32_t tag;    ///< the launch's tag; its slot is tag % kFaultSlots
    uint64_t value;  ///< the submission holding the launch
    std::shared_ptr<const VulkanKernel> kernel;
    std::thread::id thread;  ///< who launched it: the fault is owed to that thread
  };
  struct OwedFault {
    std::thread::id thread;
    std::string text;
  };
  std::unique_ptr<BoundBuffer> fault_records_;  ///< host-visible FaultWords slots
  std::deque<FaultSource> fault_sources_;       ///< launches with a channel, not yet collected
  uint32_t fault_tag_ = 0;
  std::vector<OwedFault> owed_;  ///< collected faults, each thrown by its thread's next wait
  /// Device print: a host-visible buffer (allocated at the first launch that prints) and the
  /// launches writing to it, not yet collected.
  struct PrintSource {
    uint32_t tag;    ///< the launch's tag, in each of its records
    uint64_t value;  ///< the submission holding the launch
    std::shared_ptr<const VulkanKernel> kernel;
  };
  std::unique_ptr<BoundBuffer> print_buffer_;
  VkDeviceSize print_bytes_ = 0;
  std::deque<PrintSource> print_sources_;
  uint32_t print_tag_ = 0;
  uint64_t op_ = 0;  ///< the current operation, for barrier decisions
  /// The open capture: the graph's pool (its command buffer is batch_.cmd) and launch count.
  UniqueCommandPool capture_pool_;
  size_t capture_launches_ = 0;
  std::vector<GraphFaultSlot> capture_fault_slots_;
  std::shared_ptr<BoundBuffer> capture_fault_block_;  ///< the block new slots come from
  uint32_t capture_fault_used_ = 0;                   ///< its slots in use
  /// Replays of graphs with fault records, not yet collected.
  struct GraphCheck {
    uint64_t value;  ///< the replay's submission
    std::shared_ptr<const VulkanGraph> graph;
    std::thread::id thread;  ///< who replayed it: a fault is owed to that thread
  };
  std::deque<GraphCheck> graph_checks_;
};

}  // namespace tessera::rt::vk
