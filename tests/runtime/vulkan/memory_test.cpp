// \file The suballocator: ranges of large blocks, reuse without new device memory, coalescing,
// dedicated blocks for large requests, and out-of-memory errors that name the size and device.
#include <algorithm>
#include <random>
#include <set>

#include "vk_test.h"

using tessera::rt::vk::MemoryPool;
using tessera::rt::vk::VulkanOptions;

namespace {

VulkanOptions small_blocks() {
  VulkanOptions o;
  o.block_bytes = 4 << 20;
  o.staging_bytes = 1 << 20;
  return o;
}

}  // namespace

TEST_CASE("vulkan: many alloc/free cycles reuse the blocks without allocating device memory") {
  VKTEST_DEVICE(dev);
  auto vk = tessera::rt::vk::open_device(0, small_blocks());
  std::mt19937 gen(7);
  std::uniform_int_distribution<size_t> size(1, 200000);
  auto cycle = [&] {
    std::vector<std::shared_ptr<tessera::rt::Allocation>> live;
    std::set<std::pair<uint64_t, uint64_t>> ranges;
    for (int i = 0; i < 12; ++i) {
      size_t n = size(gen);
      auto a = vk->allocate(n);
      CHECK(a->bytes() == n);
      CHECK(a->address() % MemoryPool::kAlignment == 0);
      // No two live allocations overlap.
      auto it = ranges.lower_bound({a->address(), 0});
      if (it != ranges.end()) CHECK(a->address() + n <= it->first);
      if (it != ranges.begin()) CHECK(std::prev(it)->second <= a->address());
      ranges.insert({a->address(), a->address() + n});
      live.push_back(std::move(a));
    }
  };
  cycle();
  MemoryPool::Stats first = vk->memory_stats();
  CHECK(first.vk_allocations >= 1);
  CHECK(first.used_bytes == 0);
  for (int i = 0; i < 200; ++i) cycle();
  MemoryPool::Stats after = vk->memory_stats();
  CHECK(after.vk_allocations == first.vk_allocations);
  CHECK(after.reserved_bytes == first.reserved_bytes);
  CHECK(after.used_bytes == 0);
  vktest::expect_no_validation_messages(*vk);
}

TEST_CASE("vulkan: freed neighbours coalesce into one range") {
  VKTEST_DEVICE(dev);
  auto vk = tessera::rt::vk::open_device(0, small_blocks());
  auto a = vk->allocate(1000), b = vk->allocate(3000), c = vk->allocate(500);
  uint64_t base = a->address();
  CHECK(b->address() == base + 1024);  // first fit in a fresh block, 256-byte granules
  CHECK(c->address() == base + 1024 + 3072);
  a.reset();
  b.reset();
  // The two freed ranges merged: a request for both fits where `a` was.
  auto ab = vk->allocate(4096);
  CHECK(ab->address() == base);
  CHECK(vk->memory_stats().blocks == 1);
}

TEST_CASE("vulkan: a request larger than a block gets a dedicated block, returned when freed") {
  VKTEST_DEVICE(dev);
  auto vk = tessera::rt::vk::open_device(0, small_blocks());
  auto small = vk->allocate(64);
  MemoryPool::Stats before = vk->memory_stats();
  auto big = vk->allocate((5 << 20) + 3);
  MemoryPool::Stats with = vk->memory_stats();
  CHECK(with.blocks == before.blocks + 1);
  CHECK(with.vk_allocations == before.vk_allocations + 1);
  CHECK(with.reserved_bytes >= before.reserved_bytes + (5 << 20));
  big.reset();
  CHECK(vk->memory_stats().blocks == before.blocks);
  CHECK(vk->memory_stats().reserved_bytes == before.reserved_bytes);
}

TEST_CASE("vulkan: out of memory is an OutOfMemory error naming the size and the device") {
  VKTEST_DEVICE(dev);
  const size_t huge = size_t{1} << 44;  // 16 TiB
  try {
    dev.alloc<uint8_t>(huge);
    FAIL("allocating 16 TiB should fail");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == tessera::ErrorKind::OutOfMemory);
    std::string what = e.what();
    CHECK(what.find(std::to_string(huge)) != std::string::npos);
    CHECK(what.find("vulkan:0") != std::string::npos);
  }
  // The device is still usable.
  auto b = dev.upload(std::vector<int>{1, 2, 3});
  CHECK(b.download() == std::vector<int>{1, 2, 3});
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
