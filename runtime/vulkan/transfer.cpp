/// \file Stream transfers. Uploads and downloads go through the staging ring in chunks (uploads
/// are staged at enqueue time; downloads submit and wait). Fills and device copies run our own
/// compute kernels on 16-byte (or 4-byte) words where alignment allows, because the driver's
/// vkCmdCopyBuffer is far slower on NVIDIA (0.85 vs 4.15 TB/s on an H200); the few unaligned
/// bytes at either end go through vkCmdCopyBuffer.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "runtime/vulkan/stream.h"

namespace tessera::rt::vk {
namespace {

constexpr VkPipelineStageFlags2 kCompute = VK_PIPELINE_STAGE_2_COMPUTE_SHADER_BIT;
constexpr VkPipelineStageFlags2 kCopy = VK_PIPELINE_STAGE_2_COPY_BIT;
constexpr uint64_t kMaxWordsPerDispatch = uint64_t{1} << 30;
constexpr uint32_t kUtilityThreads = 256;  // local_size_x of the utility shaders
constexpr uint32_t kMaxUtilityGroups = 8192;

/// A byte range split at `align`-byte boundaries of its device address: [head][middle][tail].
struct Split {
  VkDeviceSize head = 0, middle = 0, tail = 0;
};
Split split(VkDeviceAddress address, VkDeviceSize bytes, VkDeviceSize align) {
  Split s;
  s.head = std::min(bytes, (align - address % align) % align);
  s.middle = (bytes - s.head) / align * align;
  s.tail = bytes - s.head - s.middle;
  return s;
}

}  // namespace

const PoolAllocation& VulkanStream::pool_allocation(const Allocation& a, const char* what) const {
  auto* p = dynamic_cast<const PoolAllocation*>(&a);
  if (!p || a.device() != shared_.owner)
    fail(ErrorKind::Argument, shared_.ctx->name(), ": ", what,
         " needs memory allocated on this device (wrapped external memory can only be passed to "
         "kernels)");
  return *p;
}

void VulkanStream::dispatch_words(const VulkanKernel& k, VkCommandBuffer cmd, VkDeviceAddress dst,
                                  VkDeviceAddress src, uint64_t words,
                                  const std::vector<uint32_t>& pattern) {
  // Push blocks: copy {uvec2 src, uvec2 dst, uint count}; fill {uvec2 dst, uint count, uint period,
  // uvec4 pattern[4]} (runtime/vulkan/shaders/).
  uint64_t word_bytes = &k == shared_.utils->copy_u32.get() ? 4 : 16;
  for (uint64_t done = 0; done < words; done += kMaxWordsPerDispatch) {
    uint32_t count = static_cast<uint32_t>(std::min(words - done, kMaxWordsPerDispatch));
    uint32_t push[20] = {};
    uint64_t d = dst + done * word_bytes, s = src + done * word_bytes;
    if (pattern.empty()) {
      std::memcpy(&push[0], &s, 8);
      std::memcpy(&push[2], &d, 8);
      push[4] = count;
    } else {
      std::memcpy(&push[0], &d, 8);
      push[2] = count;
      push[3] = static_cast<uint32_t>(pattern.size() / 4);
      std::copy(pattern.begin(), pattern.end(), &push[4]);
    }
    uint32_t groups[3] = {
        std::min({(count + kUtilityThreads - 1) / kUtilityThreads, kMaxUtilityGroups,
                  shared_.ctx->limits().maxComputeWorkGroupCount[0]}),
        1, 1};
    record_dispatch(cmd, k, groups, push);
  }
  note_kernel(k.name);
}

void VulkanStream::upload(std::shared_ptr<Allocation> dst, size_t offset, const void* src,
                          size_t bytes) {
  const PoolAllocation& to = pool_allocation(*dst, "upload");
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  ++op_;
  VkDeviceSize chunk = std::max<VkDeviceSize>(ring().capacity() / 4, StagingRing::kAlignment);
  const Allocation* touched[] = {dst.get()};
  for (size_t done = 0; done < bytes;) {
    VkDeviceSize n = std::min<VkDeviceSize>(bytes - done, chunk);
    StagingRing::Region region = stage_locked(n);  // may submit: before begin_op
    std::memcpy(region.host, static_cast<const std::byte*>(src) + done, n);
    VkCommandBuffer cmd = begin_op(touched, kCopy);
    VkBufferCopy copy{region.offset, to.buffer_offset() + offset + done, n};
    shared_.ctx->fns().vkCmdCopyBuffer(cmd, ring().buffer(), to.buffer(), 1, &copy);
    ++batch_.commands;
    done += n;
  }
  batch_.keep.push_back(std::move(dst));
  maybe_submit();
}

void VulkanStream::download(std::shared_ptr<Allocation> src, size_t offset, void* dst,
                            size_t bytes) {
  const PoolAllocation& from = pool_allocation(*src, "download");
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  ++op_;
  VkDeviceSize chunk = std::max<VkDeviceSize>(ring().capacity() / 4, StagingRing::kAlignment);
  const Allocation* touched[] = {src.get()};
  struct Pending {
    std::byte* host;
    size_t at, bytes;
  };
  size_t done = 0;
  do {  // rounds: as many chunks as the ring holds, then submit, wait and copy out
    std::vector<Pending> pending;
    while (done < bytes) {
      VkDeviceSize n = std::min<VkDeviceSize>(bytes - done, chunk);
      auto region = ring().try_allocate(n, submitted_ + 1);
      if (!region) break;
      VkCommandBuffer cmd = begin_op(touched, kCopy);
      VkBufferCopy copy{from.buffer_offset() + offset + done, region->offset, n};
      shared_.ctx->fns().vkCmdCopyBuffer(cmd, from.buffer(), ring().buffer(), 1, &copy);
      ++batch_.commands;
      batch_.host_read = true;
      pending.push_back({region->host, done, n});
      done += n;
    }
    batch_.keep.push_back(src);
    submit_locked();
    wait_locked(submitted_);
    for (const Pending& p : pending)
      std::memcpy(static_cast<std::byte*>(dst) + p.at, p.host, p.bytes);
  } while (done < bytes);
  shared_.ctx->check_validation();
}

void VulkanStream::fill(std::shared_ptr<Allocation> dst, size_t offset, size_t bytes,
                        const void* pattern, size_t pattern_bytes) {
  const PoolAllocation& to = pool_allocation(*dst, "fill");
  size_t period = pattern_bytes ? std::lcm<size_t>(pattern_bytes, 16) : 0;
  if (period == 0 || period > 64)
    fail(ErrorKind::Unsupported, shared_.ctx->name(), ": fill with a ", pattern_bytes,
         "-byte pattern (patterns must repeat within 64 bytes)");
  auto* pat = static_cast<const std::byte*>(pattern);
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  ++op_;
  VkDeviceAddress address = to.address() + offset;
  Split s = split(address, bytes, 16);
  // The unaligned ends (or a fill too small for a 16-byte word) are copied from staged bytes.
  VkDeviceSize ends = s.middle ? s.head + s.tail : bytes;
  std::optional<StagingRing::Region> staged;
  if (ends) {
    staged = stage_locked(ends + 16);
    for (VkDeviceSize i = 0; i < (s.middle ? s.head : bytes); ++i)
      staged->host[i] = pat[i % pattern_bytes];
    if (s.middle)
      for (VkDeviceSize i = 0; i < s.tail; ++i)
        staged->host[16 + i] = pat[(s.head + s.middle + i) % pattern_bytes];
  }
  const Allocation* touched[] = {dst.get()};
  VkCommandBuffer cmd = begin_op(touched, (s.middle ? kCompute : 0) | (ends ? kCopy : 0));
  VkDeviceSize base = to.buffer_offset() + offset;
  VkBufferCopy copies[2];
  uint32_t ncopies = 0;
  if (!s.middle) copies[ncopies++] = {staged ? staged->offset : 0, base, bytes};
  if (s.middle && s.head) copies[ncopies++] = {staged->offset, base, s.head};
  if (s.middle && s.tail)
    copies[ncopies++] = {staged->offset + 16, base + s.head + s.middle, s.tail};
  if (ncopies) {
    shared_.ctx->fns().vkCmdCopyBuffer(cmd, ring().buffer(), to.buffer(), ncopies, copies);
    ++batch_.commands;
  }
  if (s.middle) {
    // The words of the aligned middle start at byte s.head of the pattern's cycle.
    std::vector<uint32_t> words(period / 4);
    auto* bytes_of_words = reinterpret_cast<std::byte*>(words.data());
    for (size_t i = 0; i < period; ++i) bytes_of_words[i] = pat[(s.head + i) % pattern_bytes];
    dispatch_words(*shared_.utils->fill, cmd, address + s.head, 0, s.middle / 16, words);
  }
  batch_.keep.push_back(std::move(dst));
  maybe_submit();
}

void VulkanStream::copy(std::shared_ptr<Allocation> dst, size_t dst_offset,
                        std::shared_ptr<Allocation> src, size_t src_offset, size_t bytes) {
  const PoolAllocation& to = pool_allocation(*dst, "copy");
  const PoolAllocation& from = pool_allocation(*src, "copy");
  std::lock_guard lock(mutex_);
  shared_.ctx->check_alive();
  ++op_;
  if (dst == src && dst_offset == src_offset) return;
  bool overlap = dst == src && dst_offset < src_offset + bytes && src_offset < dst_offset + bytes;
  if (!overlap) {
    copy_locked({&to, dst_offset}, {&from, src_offset}, bytes);
  } else {  // through a temporary, as memmove would
    auto temp = shared_.memory->allocate(shared_.owner, bytes);
    const PoolAllocation& t = pool_allocation(*temp, "copy");
    copy_locked({&t, 0}, {&from, src_offset}, bytes);
    ++op_;
    copy_locked({&to, dst_offset}, {&t, 0}, bytes);
    batch_.keep.push_back(std::move(temp));
  }
  batch_.keep.push_back(std::move(dst));
  batch_.keep.push_back(std::move(src));
  maybe_submit();
}

void VulkanStream::copy_locked(Span dst, Span src, VkDeviceSize bytes) {
  VkDeviceAddress da = dst.alloc->address() + dst.offset, sa = src.alloc->address() + src.offset;
  const VulkanKernel* kernel = nullptr;
  VkDeviceSize word = 0;
  if (da % 16 == sa % 16)
    kernel = shared_.utils->copy_vec4.get(), word = 16;
  else if (da % 4 == sa % 4)
    kernel = shared_.utils->copy_u32.get(), word = 4;
  Split s = kernel ? split(da, bytes, word) : Split{0, 0, bytes};
  if (s.middle == 0) s = Split{0, 0, bytes};  // too small for a word: one driver copy

  const Allocation* touched[] = {dst.alloc, src.alloc};
  VkDeviceSize ends = s.head + s.tail;
  VkCommandBuffer cmd = begin_op(touched, (s.middle ? kCompute : 0) | (ends ? kCopy : 0));
  VkDeviceSize d = dst.alloc->buffer_offset() + dst.offset,
               so = src.alloc->buffer_offset() + src.offset;
  VkBufferCopy copies[2];
  uint32_t n = 0;
  if (s.head) copies[n++] = {so, d, s.head};
  if (s.tail) copies[n++] = {so + s.head + s.middle, d + s.head + s.middle, s.tail};
  if (n) {
    shared_.ctx->fns().vkCmdCopyBuffer(cmd, src.alloc->buffer(), dst.alloc->buffer(), n, copies);
    ++batch_.commands;
  }
  if (s.middle) dispatch_words(*kernel, cmd, da + s.head, sa + s.head, s.middle / word, {});
}

}  // namespace tessera::rt::vk
