// \file Uploads, downloads, fills, copies and slices against host references: sizes that are not
// multiples of 4 or 16, odd offsets, transfers larger than the staging ring, overlapping copies.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "vk_test.h"

using tessera::Buffer;
using tessera::Device;

namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(gen());
  return v;
}

/// A device with a 256 KiB staging ring, so that megabyte transfers take several chunks.
std::shared_ptr<tessera::rt::vk::VulkanDevice> small_ring_device() {
  tessera::rt::vk::VulkanOptions o;
  o.staging_bytes = 256 << 10;
  o.block_bytes = 16 << 20;
  return tessera::rt::vk::open_device(0, o);
}

}  // namespace

TEST_CASE("vulkan: upload/download round trips of many sizes, including odd ones") {
  VKTEST_DEVICE(dev);
  for (size_t n : {size_t{1}, size_t{3}, size_t{4}, size_t{15}, size_t{16}, size_t{17}, size_t{255},
                   size_t{4093}, size_t{65536 + 7}, size_t{(1 << 20) + 5}}) {
    CAPTURE(n);
    auto host = random_bytes(n, static_cast<uint32_t>(n));
    Buffer<uint8_t> b = dev.upload(host);
    CHECK(b.download() == host);
  }
  std::vector<float> f(12345);
  std::iota(f.begin(), f.end(), -100.5f);
  CHECK(dev.upload(f).download() == f);
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan: transfers larger than the staging ring go in chunks") {
  VKTEST_DEVICE(dev);
  auto vk = small_ring_device();
  size_t n = (1 << 20) + 13;  // four rings and a bit, not a multiple of 4
  auto host = random_bytes(n, 11);
  auto alloc = vk->allocate(n);
  auto stream = vk->default_stream();
  stream->upload(alloc, 0, host.data(), n);
  std::vector<uint8_t> back(n);
  stream->download(alloc, 0, back.data(), n);
  CHECK(back == host);
  // At an odd offset, into the middle of the allocation.
  std::vector<uint8_t> part(300001, 0x5a);
  stream->upload(alloc, 777, part.data(), part.size());
  stream->download(alloc, 0, back.data(), n);
  std::copy(part.begin(), part.end(), host.begin() + 777);
  CHECK(back == host);
  vktest::expect_no_validation_messages(*vk);
}

TEST_CASE("vulkan: uploads are staged at enqueue time, in stream order") {
  VKTEST_DEVICE(dev);
  auto vk = small_ring_device();
  auto stream = vk->default_stream();
  auto alloc = vk->allocate(4096);
  std::vector<uint32_t> host(1024);
  // Many uploads into the same range from one host vector reused at once: the last one wins.
  for (uint32_t round = 0; round < 50; ++round) {
    std::fill(host.begin(), host.end(), round);
    stream->upload(alloc, 0, host.data(), 4096);
  }
  std::fill(host.begin(), host.end(), 0xdeadbeef);
  std::vector<uint32_t> back(1024);
  stream->download(alloc, 0, back.data(), 4096);
  CHECK(std::all_of(back.begin(), back.end(), [](uint32_t v) { return v == 49; }));
}

TEST_CASE("vulkan: fills of every element size over odd ranges leave their neighbours alone") {
  VKTEST_DEVICE(dev);
  const size_t n = 5000;
  auto check_fill = [&](auto value, size_t begin, size_t count) {
    using T = decltype(value);
    CAPTURE(sizeof(T));
    CAPTURE(begin);
    CAPTURE(count);
    std::vector<T> host(n);
    std::memset(host.data(), 0xab, n * sizeof(T));
    Buffer<T> b = dev.upload(host);
    b.slice(begin, count).fill(value);
    std::fill(host.begin() + begin, host.begin() + begin + count, value);
    auto back = b.download();
    CHECK(std::memcmp(back.data(), host.data(), n * sizeof(T)) == 0);
  };
  for (auto [begin, count] :
       {std::pair<size_t, size_t>{0, n}, {1, 1}, {3, 2}, {5, 31}, {7, 4000}, {13, 4987}}) {
    check_fill(uint8_t{0x3c}, begin, count);
    check_fill(uint16_t{0xbeef}, begin, count);
    check_fill(1.25f, begin, count);
    check_fill(-3.5, begin, count);
    check_fill(uint64_t{0x0123456789abcdefull}, begin, count);
  }
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan: copies at every relative alignment match memmove") {
  VKTEST_DEVICE(dev);
  const size_t n = 70000;
  auto src_host = random_bytes(n, 3);
  auto dst_host = random_bytes(n, 4);
  Buffer<uint8_t> src = dev.upload(src_host), dst = dev.upload(dst_host);
  size_t cases = 0;
  for (size_t so : {0, 1, 4, 8, 13, 16}) {
    for (size_t d : {0, 2, 3, 4, 12, 16, 17}) {
      for (size_t count : {size_t{1}, size_t{7}, size_t{33}, size_t{4099}, size_t{60000}}) {
        dst.slice(d, count).copy_from(src.slice(so, count));
        std::memcpy(dst_host.data() + d, src_host.data() + so, count);
        ++cases;
      }
    }
  }
  // All copies went into one stream without a synchronize: order and barriers decide the result.
  CHECK(dst.download() == dst_host);
  CHECK(cases == 210);
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan: overlapping copies within one buffer behave like memmove") {
  VKTEST_DEVICE(dev);
  const size_t n = 10000;
  auto host = random_bytes(n, 5);
  Buffer<uint8_t> b = dev.upload(host);
  b.slice(100, 5000).copy_from(b.slice(0, 5000));  // forward overlap
  std::memmove(host.data() + 100, host.data(), 5000);
  b.slice(3, 6000).copy_from(b.slice(1000, 6000));  // backward overlap
  std::memmove(host.data() + 3, host.data() + 1000, 6000);
  CHECK(b.download() == host);
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan: slices upload, download and copy their own range") {
  VKTEST_DEVICE(dev);
  std::vector<int32_t> host(1000);
  std::iota(host.begin(), host.end(), 0);
  Buffer<int32_t> b = dev.upload(host);
  std::vector<int32_t> part{-1, -2, -3, -4, -5};
  b.slice(333, 5).upload(part);
  CHECK(b.slice(330, 10).download() ==
        std::vector<int32_t>{330, 331, 332, -1, -2, -3, -4, -5, 338, 339});
  Buffer<int32_t> other = dev.alloc<int32_t>(10);
  other.fill(7);
  other.slice(2, 5).copy_from(b.slice(333, 5));
  CHECK(other.download() == std::vector<int32_t>{7, 7, -1, -2, -3, -4, -5, 7, 7, 7});
  CHECK(b.slice(999, 1).download() == std::vector<int32_t>{999});
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
