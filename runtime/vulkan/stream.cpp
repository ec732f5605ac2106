/// \file Stream batching: opening command buffers, the barrier rule, submission with the timeline
/// semaphore, retiring finished work, device loss, launches (with the folded grid) and events.
#include "runtime/vulkan/stream.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "runtime/timeout.h"

namespace tessera::rt::vk {
namespace {

constexpr VkPipelineStageFlags2 kCompute = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
constexpr VkPipelineStageFlags2 kCopy = VK_PIPELINE_STAGE_2_COPY_BIT;

VkAccessFlags2 writes_of(VkPipelineStageFlags2 stages) {
  return ((stages & kCompute) ? VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT : 0) |
         ((stages & kCopy) ? VK_ACCESS_2_TRANSFER_WRITE_BIT : 0);
}

VkAccessFlags2 accesses_of(VkPipelineStageFlags2 stages) {
  return ((stages & kCompute)
              ? VK_ACCESS_2_SHADER_STORAGE_READ_BIT | VK_ACCESS_2_SHADER_STORAGE_WRITE_BIT
              : 0) |
         ((stages & kCopy) ? VK_ACCESS_2_TRANSFER_READ_BIT | VK_ACCESS_2_TRANSFER_WRITE_BIT : 0);
}

void memory_barrier(const DeviceFns& f, VkCommandBuffer cmd, VkPipelineStageFlags2 src_stages,
                    VkAccessFlags2 src_access, VkPipelineStageFlags2 dst_stages,
                    VkAccessFlags2 dst_access) {
  VkMemoryBarrier2 barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
  barrier.srcStageMask = src_stages;
  barrier.srcAccessMask = src_access;
  barrier.dstStageMask = dst_stages;
  barrier.dstAccessMask = dst_access;
  VkDependencyInfo dep{VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
  dep.memoryBarrierCount = 1;
  dep.pMemoryBarriers = &barrier;
  f.vkCmdPipelineBarrier2(cmd, &dep);
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    if (std::find(names.begin(), names.begin() + i, names[i]) == names.begin() + i)
      s += (s.empty() ? "" : ", ") + names[i];
  return s.empty() ? "(no kernels)" : s;
}

/// The physical workgroup counts for a logical grid: as is when it fits the device, else folded
/// (x = min(total, max_x), y = ceil(total / x), ...) for kernels that rebuild their program ids.
void physical_groups(const VulkanKernel& k, const Grid& grid, const VkPhysicalDeviceLimits& l,
                     const std::string& device, uint32_t out[3]) {
  const uint32_t* m = l.maxComputeWorkGroupCount;
  if (grid.x <= m[0] && grid.y <= m[1] && grid.z <= m[2]) {
    out[0] = grid.x, out[1] = grid.y, out[2] = grid.z;
    return;
  }
  auto too_big = [&](const char* why) {
    fail(ErrorKind::Unsupported, "kernel ", k.name, ": grid (", grid.x, ", ", grid.y, ", ", grid.z,
         ") exceeds the workgroup counts of ", device, " (", m[0], ", ", m[1], ", ", m[2], ")",
         why);
  };
  if (k.grid_offset() < 0) too_big(" and the kernel has no grid words to fold it");
  uint64_t total = grid.programs();
  uint64_t x = std::min<uint64_t>(total, m[0]);
  uint64_t y = std::min<uint64_t>((total + x - 1) / x, m[1]);
  uint64_t z = (total + x * y - 1) / (x * y);
  if (z > m[2]) too_big(" even when folded");
  out[0] = static_cast<uint32_t>(x), out[1] = static_cast<uint32_t>(y),
  out[2] = static_cast<uint32_t>(z);
}

}  // namespace

TimelineSemaphore::TimelineSemaphore(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  info.pNext = &type;
  VkSemaphore s = VK_NULL_HANDLE;
  ctx_->check(ctx_->fns().vkCreateSemaphore(ctx_->device(), &info, nullptr, &s),
              "vkCreateSemaphore");
  semaphore_ = UniqueSemaphore(ctx_.get(), s);
}

TimelineSemaphore::~TimelineSemaphore() {
  if (waited_.load(std::memory_order_relaxed)) ctx_->wait_idle_quietly();
}

VulkanStream::VulkanStream(DeviceShared shared) : shared_(std::move(shared)) {
  Context& ctx = *shared_.ctx;
  VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  info.flags =
      VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT | VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  info.queueFamilyIndex = ctx.facts().queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  ctx.check(ctx.fns().vkCreateCommandPool(ctx.device(), &info, nullptr, &pool),
            "vkCreateCommandPool");
  pool_ = UniqueCommandPool(&ctx, pool);
  semaphore_ = std::make_shared<TimelineSemaphore>(shared_.ctx);
}

VulkanStream::~VulkanStream() {
  std::lock_guard lock(mutex_);
  try {
    if (!shared_.ctx->lost()) {
      submit_locked();
      wait_locked(submitted_);
    }
  } catch (...) {
    // A destructor cannot report; the work's resources are released below once the queue is idle.
  }
  if (!in_flight_.empty() || batch_.cmd) shared_.ctx->wait_idle_quietly();
  // The command pool frees the command buffers; keep-alives go with the members.
}

StagingRing& VulkanStream::ring() {
  if (!ring_) ring_ = std::make_unique<StagingRing>(shared_.ctx, shared_.staging_bytes);
  return *ring_;
}

StagingRing::Region VulkanStream::stage_locked(VkDeviceSize bytes) {
  for (;;) {
    if (auto r = ring().try_allocate(bytes, submitted_ + 1)) return *r;
    uint64_t oldest = ring().oldest_ticket();
    TESSERA_CHECK(oldest != 0, "a staging region of ", bytes, " bytes exceeds the ring (",
                  ring().capacity(), ")");
    if (oldest > submitted_) submit_locked();  // the ring is full of the open batch's regions
    wait_locked(oldest);
  }
}

VkCommandBuffer VulkanStream::begin_op(std::span<const Allocation* const> allocs,
                                       VkPipelineStageFlags2 stage) {
  const DeviceFns& f = shared_.ctx->fns();
  if (!batch_.cmd) {
    if (free_cmds_.empty()) {
      VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      info.commandPool = pool_.get();
      info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      info.commandBufferCount = 1;
      VkCommandBuffer cmd = VK_NULL_HANDLE;
      shared_.ctx->check(f.vkAllocateCommandBuffers(shared_.ctx->device(), &info, &cmd),
                         "vkAllocateCommandBuffers");
      free_cmds_.push_back(cmd);
    }
    VkCommandBuffer cmd = free_cmds_.back();
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    shared_.ctx->check(f.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
    free_cmds_.pop_back();
    batch_.cmd = cmd;
  }
  // A barrier only when an allocation this operation uses was used by an earlier operation of
  // the batch and no barrier since then orders this stage after it.
  bool hazard = std::any_of(allocs.begin(), allocs.end(), [&](const Allocation* a) {
    auto it = batch_.touched.find(a);
    return it != batch_.touched.end() && it->second.op != op_ &&
           (it->second.ordered & stage) != stage;
  });
  if (hazard) {
    memory_barrier(f, batch_.cmd, batch_.stages, writes_of(batch_.stages), stage,
                   accesses_of(stage));
    for (auto& [a, touch] : batch_.touched) touch.ordered |= stage;
  }
  for (const Allocation* a : allocs) batch_.touched[a] = Touch{op_, 0};
  batch_.stages |= stage;
  return batch_.cmd;
}

void VulkanStream::record_dispatch(VkCommandBuffer cmd, const VulkanKernel& k,
                                   const uint32_t groups[3], const void* push) {
  const DeviceFns& f = shared_.ctx->fns();
  if (batch_.bound != k.pipeline()) {
    f.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline());
    batch_.bound = k.pipeline();
  }
  if (k.push_bytes())
    f.vkCmdPushConstants(cmd, k.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, k.push_bytes(), push);
  f.vkCmdDispatch(cmd, groups[0], groups[1], groups[2]);
  ++batch_.commands;
}

void VulkanStream::note_kernel(const std::string& name) {
  if (batch_.kernels.empty() || batch_.kernels.back() != name) batch_.kernels.push_back(name);
}

void VulkanStream::maybe_submit() {
  if (capturing()) return;  // the capture's command buffer grows until end_capture
  if (batch_.commands >= kMaxBatchCommands) return submit_locked();
  if (batch_.commands < kIdleSubmitCommands || batch_.commands % kIdleSubmitCommands != 0) return;
  retire_locked();
  if (in_flight_.empty()) submit_locked();  // the GPU is idle: give it this batch now
}

void VulkanStream::submit_locked() {
  if (!batch_.cmd || capturing()) return;  // a capture's command buffer is the graph's
  Context& ctx = *shared_.ctx;
  const DeviceFns& f = ctx.fns();
  if (batch_.host_read)
    memory_barrier(f, batch_.cmd, batch_.stages, writes_of(batch_.stages),
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  Batch batch = std::move(batch_);
  batch_ = Batch{};
  batch_.waits = std::move(batch.waits);  // submit_cmd_locked takes them from the open batch
  ctx.check(f.vkEndCommandBuffer(batch.cmd), "vkEndCommandBuffer", join(batch.kernels));
  submit_cmd_locked(batch.cmd, std::move(batch.keep), std::move(batch.kernels), /*reuse=*/true);
}

void VulkanStream::submit_cmd_locked(VkCommandBuffer cmd_buffer,
                                     std::vector<std::shared_ptr<const void>> keep,
                                     std::vector<std::string> kernels, bool reuse) {
  Context& ctx = *shared_.ctx;
  auto batch_waits = std::move(batch_.waits);
  batch_.waits.clear();
  uint64_t value = submitted_ + 1;
  std::vector<VkSemaphoreSubmitInfo> waits;
  // Stream order across submissions: this batch starts after the previous one finished.
  if (submitted_ > 0)
    waits.push_back({VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, semaphore_->handle(),
                     submitted_, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, 0});
  for (const auto& [sem, v] : batch_waits)
    waits.push_back({VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, sem->handle(), v,
                     VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, 0});
  VkSemaphoreSubmitInfo signal{
      VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO, nullptr, semaphore_->handle(), value,
      VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT,    0};
  VkCommandBufferSubmitInfo cmd{VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO, nullptr, cmd_buffer,
                                0};
  VkSubmitInfo2 info{VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
  info.waitSemaphoreInfoCount = static_cast<uint32_t>(waits.size());
  info.pWaitSemaphoreInfos = waits.data();
  info.commandBufferInfoCount = 1;
  info.pCommandBufferInfos = &cmd;
  info.signalSemaphoreInfoCount = 1;
  info.pSignalSemaphoreInfos = &signal;
  VkResult r = ctx.submit(info);
  for (auto& w : batch_waits) keep.push_back(w.first);
  in_flight_.push_back({value, cmd_buffer, std::move(keep), std::move(kernels), reuse});
  if (r == VK_ERROR_DEVICE_LOST) fail_lost("vkQueueSubmit2");
  if (r != VK_SUCCESS) {
    Submission dropped = std::move(in_flight_.back());
    in_flight_.pop_back();
    if (dropped.reuse) free_cmds_.push_back(dropped.cmd);
    ctx.check(r, "vkQueueSubmit2", join(dropped.kernels));
  }
  submitted_ = value;
  retire_locked();
}

void VulkanStream::retire_locked() {
  if (in_flight_.empty()) return;
  Context& ctx = *shared_.ctx;
  uint64_t value = 0;
  VkResult r = ctx.filter_wait_result(
      ctx.fns().vkGetSemaphoreCounterValue(ctx.device(), semaphore_->handle(), &value));
  if (r == VK_ERROR_DEVICE_LOST) fail_lost("vkGetSemaphoreCounterValue");
  ctx.check(r, "vkGetSemaphoreCounterValue");
  completed_ = std::max(completed_, value);
  while (!in_flight_.empty() && in_flight_.front().value <= completed_) {
    if (in_flight_.front().reuse) free_cmds_.push_back(in_flight_.front().cmd);
    in_flight_.pop_front();
  }
  if (ring_) ring_->retire(completed_);
  collect_fault_locked();
  collect_print_locked();
}

void VulkanStream::wait_locked(uint64_t value) {
  if (value == 0 || completed_ >= value) return throw_fault_locked();
  Context& ctx = *shared_.ctx;
  double seconds = 0;
  VkResult r = ctx.wait_semaphore(semaphore_->handle(), value, &seconds);
  if (r == VK_TIMEOUT) {
    // The device finished nothing for TESSERA_TIMEOUT: it is reported lost. The work's resources
    // stay with the stream (the device may still be using them); nothing waits for them again.
    std::vector<std::string> kernels;
    for (const auto& s : in_flight_)
      if (s.value > completed_ && s.value <= value)
        kernels.insert(kernels.end(), s.kernels.begin(), s.kernels.end());
    std::string why = ctx.name() + " (" + ctx.facts().device_name() +
                      ") stopped answering: vkWaitSemaphores timed out after " +
                      timeout_text(seconds) + " waiting for kernels " + join(kernels) +
                      "; the device is treated as lost";
    ctx.mark_hung(why);
    throw Error(ErrorKind::DeviceFault, why);
  }
  if (r == VK_ERROR_DEVICE_LOST) fail_lost("vkWaitSemaphores");
  ctx.check(r, "vkWaitSemaphores");
  completed_ = std::max(completed_, value);
  retire_locked();
  throw_fault_locked();  // a fault reported by this stream's kernels
}

void VulkanStream::fail_lost(std::string_view call) {
  Context& ctx = *shared_.ctx;
  std::vector<std::string> kernels;
  for (const auto& s : in_flight_)
    if (s.value > completed_) kernels.insert(kernels.end(), s.kernels.begin(), s.kernels.end());
  kernels.insert(kernels.end(), batch_.kernels.begin(), batch_.kernels.end());
  std::string why = describe_failure(call, VK_ERROR_DEVICE_LOST) + " on " + ctx.name() + " (" +
                    ctx.facts().device_name() + ") while running kernels " + join(kernels);
  ctx.mark_lost(why);
  // The queue may still hold the work: let it drain before its resources go.
  ctx.wait_idle_quietly();
  in_flight_.clear();
  if (batch_.cmd && !capturing()) free_cmds_.push_back(batch_.cmd);
  batch_ = Batch{};
  throw Error(ErrorKind::DeviceFault, why);
}

void VulkanStream::launch(std::shared_ptr<const CompiledKernel> kernel, Grid grid,
                          std::vector<std::byte> params,
                          std::vector<std::shared_ptr<Allocation>> keep_alive) {
  launch_packed(kernel, grid, params, keep_alive);
}

void VulkanStream::launch_packed(const std::shared_ptr<const CompiledKernel>& kernel, Grid grid,
                                 std::span<const std::byte> packed,
                                 std::span<std::shared_ptr<Allocation>> keep_alive) {
  auto k = std::dynamic_pointer_cast<const VulkanKernel>(kernel);
  TESSERA_CHECK(k != nullptr, "kernel ", kernel->name, " was not compiled for a Vulkan device");
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  if (k->released())
    fail(ErrorKind::Runtime, "kernel ", k->name, ": its device (", shared_.ctx->name(),
         ") was closed at process exit");
  ++op_;
  if (grid.programs() == 0) return;
  TESSERA_CHECK(packed.size() <= k->param_bytes(), "kernel ", k->name, ": ", packed.size(),
                "-byte parameters for a ", k->param_bytes(), "-byte block");
  const bool capturing = this->capturing();
  if (capturing && k->print_offset() >= 0)
    fail(ErrorKind::Unsupported, "kernel ", k->name, " cannot be captured in a graph on ",
         shared_.ctx->name(),
         ": it prints, and the stream reads its records after each submission; launch it "
         "outside the capture");
  uint32_t groups[3];
  physical_groups(*k, grid, shared_.ctx->limits(), shared_.ctx->name(), groups);
  // The block with the grid words and channels: on the stack when it fits (push constants do).
  const size_t block_bytes = std::max<size_t>(k->param_bytes(), k->push_bytes());
  std::array<std::byte, 256> local{};
  std::vector<std::byte> heap;
  if (block_bytes > local.size()) heap.resize(block_bytes);
  std::span<std::byte> params =
      heap.empty() ? std::span<std::byte>(local.data(), block_bytes) : std::span<std::byte>(heap);
  std::copy(packed.begin(), packed.end(), params.begin());
  if (k->grid_offset() >= 0) {
    uint32_t logical[3] = {grid.x, grid.y, grid.z};
    std::memcpy(params.data() + k->grid_offset(), logical, sizeof logical);
  }
  attach_fault_record(k, params);
  attach_print_buffer(k, params);
  const void* push = params.data();
  VkDeviceAddress block_address = 0;
  std::shared_ptr<BoundBuffer> held_block;
  if (k->params_by_address() && capturing) {  // a block of the graph's own, read at each replay
    held_block = std::make_shared<BoundBuffer>(
        create_host_buffer(*shared_.ctx, k->param_bytes(),
                           "the parameter block of kernel " + k->name + " in a graph"));
    std::memcpy(held_block->mapped, params.data(), k->param_bytes());
    block_address = held_block->address;
    push = &block_address;
  } else if (k->params_by_address()) {  // the block goes into this launch's slot of the param ring
    StagingRing::Region slot = stage_locked(k->param_bytes());
    std::memcpy(slot.host, params.data(), k->param_bytes());
    block_address = slot.address;
    push = &block_address;
  }
  std::array<const Allocation*, 16> local_allocs;
  std::vector<const Allocation*> heap_allocs;
  if (keep_alive.size() > local_allocs.size()) heap_allocs.resize(keep_alive.size());
  const Allocation** allocs = heap_allocs.empty() ? local_allocs.data() : heap_allocs.data();
  for (size_t i = 0; i < keep_alive.size(); ++i) allocs[i] = keep_alive[i].get();
  VkCommandBuffer cmd =
      begin_op(std::span<const Allocation* const>(allocs, keep_alive.size()), kCompute);
  record_dispatch(cmd, *k, groups, push);
  note_kernel(k->name);
  batch_.keep.push_back(k);
  if (held_block) batch_.keep.push_back(std::move(held_block));
  for (auto& a : keep_alive) batch_.keep.push_back(std::move(a));
  if (capturing) {
    ++capture_launches_;
    return;
  }
  maybe_submit();
}

void VulkanStream::begin_capture() {
  std::lock_guard lock(mutex_);
  Context& ctx = *shared_.ctx;
  ctx.check_alive();
  submit_locked();  // earlier work goes first, in its own submission
  const DeviceFns& f = ctx.fns();
  VkCommandPoolCreateInfo info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  info.queueFamilyIndex = ctx.facts().queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  ctx.check(f.vkCreateCommandPool(ctx.device(), &info, nullptr, &pool), "vkCreateCommandPool");
  UniqueCommandPool owned(&ctx, pool);
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  ctx.check(f.vkAllocateCommandBuffers(ctx.device(), &alloc, &cmd), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;  // replays may overlap
  ctx.check(f.vkBeginCommandBuffer(cmd, &begin), "vkBeginCommandBuffer");
  Batch fresh;
  fresh.waits = std::move(batch_.waits);  // waits of the open batch stay with the stream
  batch_ = std::move(fresh);
  batch_.cmd = cmd;
  capture_pool_ = std::move(owned);
  capture_launches_ = 0;
  capturing_.store(true, std::memory_order_release);
}

std::shared_ptr<GraphImpl> VulkanStream::end_capture() {
  std::lock_guard lock(mutex_);
  capturing_.store(false, std::memory_order_release);
  Context& ctx = *shared_.ctx;
  Batch batch = std::move(batch_);
  batch_ = Batch{};
  batch_.waits = std::move(batch.waits);
  UniqueCommandPool pool = std::move(capture_pool_);
  std::vector<GraphFaultSlot> fault_slots = std::move(capture_fault_slots_);
  capture_fault_slots_.clear();
  capture_fault_block_.reset();
  ctx.check_alive();
  if (batch.host_read)  // fault records: the host reads them once a replay is done
    memory_barrier(ctx.fns(), batch.cmd, batch.stages, writes_of(batch.stages),
                   VK_PIPELINE_STAGE_2_HOST_BIT, VK_ACCESS_2_HOST_READ_BIT);
  ctx.check(ctx.fns().vkEndCommandBuffer(batch.cmd), "vkEndCommandBuffer", join(batch.kernels));
  return std::make_shared<VulkanGraph>(shared_.owner, shared_.ctx, std::move(pool), batch.cmd,
                                       std::move(batch.keep), std::move(batch.kernels),
                                       std::move(fault_slots), capture_launches_);
}

void VulkanStream::abandon_capture() {
  std::lock_guard lock(mutex_);
  capturing_.store(false, std::memory_order_release);
  Batch batch = std::move(batch_);
  batch_ = Batch{};
  batch_.waits = std::move(batch.waits);
  capture_pool_ = UniqueCommandPool();  // frees the command buffer, never submitted
  capture_fault_slots_.clear();
  capture_fault_block_.reset();
}

void VulkanStream::replay_graph(const std::shared_ptr<VulkanGraph>& graph) {
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  ++op_;
  if (!graph->cmd()) return;  // nothing was captured
  submit_locked();            // the open batch goes first
  // A fresh batch after this submission: the graph's writes are ordered by the semaphore.
  submit_cmd_locked(graph->cmd(), {graph}, graph->kernels(), /*reuse=*/false);
  if (!graph->fault_slots().empty())
    graph_checks_.push_back({submitted_, graph, std::this_thread::get_id()});
}

void VulkanStream::record(std::shared_ptr<EventImpl> event) {
  auto e = std::static_pointer_cast<VulkanEvent>(event);
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  ++op_;
  VkCommandBuffer cmd = begin_op({}, 0);
  if (shared_.queries->timestamps()) {
    const DeviceFns& f = shared_.ctx->fns();
    if (!e->take_fresh()) f.vkCmdResetQueryPool(cmd, e->slot().pool, e->slot().index, 1);
    // ALL_COMMANDS: the stamp is taken once everything before it has finished.
    f.vkCmdWriteTimestamp2(cmd, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, e->slot().pool,
                           e->slot().index);
  }
  ++batch_.commands;
  e->set_mark(weak_from_this(), submitted_ + 1);
  batch_.keep.push_back(e);
}

void VulkanStream::wait(std::shared_ptr<EventImpl> event) {
  auto e = std::static_pointer_cast<VulkanEvent>(event);
  VulkanEvent::Mark mark = e->mark();
  auto other = mark.stream.lock();
  // Unrecorded: it would never complete. Same stream: stream order already holds. A stream that
  // is gone finished its work when it went.
  if (!mark.recorded)
    fail(ErrorKind::Argument, shared_.ctx->name(), ": wait_in of an event that was never recorded");
  if (!other || other.get() == this) return;
  other->flush_through(mark.value);  // without holding our lock: no lock-order cycle
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  submit_locked();  // work before the wait need not wait
  other->semaphore()->mark_waited();
  batch_.waits.emplace_back(other->semaphore(), mark.value);
}

void VulkanStream::synchronize() {
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  submit_locked();
  wait_locked(submitted_);
  shared_.ctx->check_validation();
}

void VulkanStream::flush_through(uint64_t value) {
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  if (value > submitted_) submit_locked();
}

void VulkanStream::wait_for(uint64_t value) {
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  if (value > submitted_) submit_locked();
  wait_locked(value);
  shared_.ctx->check_validation();
}

}  // namespace tessera::rt::vk
