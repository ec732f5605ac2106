/// \file The CUDA device: enumeration (or the reason there is none), its description and target,
/// and memory: allocation, upload, download, fill with every pattern width, copy, slices,
/// external pointers, and out-of-memory errors.
#include <numeric>
#include <random>

#include "helpers.h"

namespace cuda_test {
namespace {

TEST_CASE("cuda: enumeration lists cuda:N devices or says why there are none") {
  Device::Listing listing = Device::enumerate();
  bool any = false;
  for (const auto& d : listing.devices) {
    if (d.kind != "cuda") continue;
    any = true;
    CHECK(d.name.starts_with("cuda:"));
    CHECK(d.rank == 40);
    CHECK(contains(d.description, " SMs, "));
    auto t = tessera::target::parse_target(d.target);
    REQUIRE(t);
    CHECK(t->name.starts_with("cuda-sm_"));
    CHECK(t->subgroup_size == 32);
    CHECK(t->max_shared_bytes >= 49152);
    MESSAGE(d.name << ": " << d.description << " target " << d.target);
  }
  if (any) return;
  bool said = false;
  for (const std::string& u : listing.unavailable)
    said = said || u.starts_with("cuda unavailable: ");
  CHECK(said);
  for (const std::string& u : listing.unavailable) MESSAGE("SKIP: " << u);
}

TEST_CASE("cuda: the best device is a CUDA device when there is one") {
  CUDA_DEVICE_OR_SKIP(dev);
  CHECK(Device::best().info().kind == "cuda");
  CHECK(tessera::rt::cuda::multiprocessors(*dev.impl()) > 0);
}

TEST_CASE("cuda: upload and download round-trip, from 1 byte to beyond the staging size") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::mt19937 rng(5);
  for (size_t n :
       {size_t{1}, size_t{3}, size_t{1000}, size_t{1} << 20, (size_t{80} << 20) / 4 + 5}) {
    CAPTURE(n);
    std::vector<uint32_t> host(n);
    for (auto& v : host) v = rng();
    auto b = dev.upload(host);
    CHECK(b.download() == host);
  }
  auto empty = dev.alloc<float>(0);
  CHECK(empty.download().empty());
}

TEST_CASE("cuda: fill with 1-, 2-, 4-, 8- and 3-byte patterns, on aligned and unaligned slices") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto bytes = dev.alloc<uint8_t>(1001);
  bytes.fill(0xab);
  CHECK(bytes.download() == std::vector<uint8_t>(1001, 0xab));
  auto halves = dev.alloc<uint16_t>(777);
  halves.fill(0x1234);
  CHECK(halves.download() == std::vector<uint16_t>(777, 0x1234));
  auto floats = dev.alloc<float>(513);
  floats.fill(-2.5f);
  CHECK(floats.download() == std::vector<float>(513, -2.5f));
  auto doubles = dev.alloc<double>(300);
  doubles.fill(3.25);
  CHECK(doubles.download() == std::vector<double>(300, 3.25));
  auto i64 = dev.alloc<int64_t>(65);
  i64.fill(-0x123456789abLL);
  CHECK(i64.download() == std::vector<int64_t>(65, -0x123456789abLL));
  tessera::Buffer<uint8_t> rgb = dev.alloc<uint8_t>(300);  // a 3-byte pattern
  const uint8_t pattern3[3] = {1, 2, 3};
  rgb.fill_bytes(pattern3, 3, nullptr);
  std::vector<uint8_t> rgb_host = rgb.download();
  for (size_t i = 0; i < 300; ++i) CHECK(rgb_host[i] == i % 3 + 1);
  // A float slice that starts 2 bytes into the allocation (through a u16 view): unaligned for
  // 32-bit fills, so the pattern goes byte by byte.
  auto raw = dev.alloc<uint16_t>(11);
  raw.fill(0);
  BufferBase odd = raw.sub(2, 16);
  float pattern = 1.0f;
  odd.fill_bytes(&pattern, 4, nullptr);
  std::vector<uint16_t> got = raw.download();
  CHECK(got[0] == 0);
  for (int i = 1; i <= 8; i += 2) {  // four floats at bytes 2, 6, 10, 14
    CHECK(got[i] == 0);              // low half of 1.0f
    CHECK(got[i + 1] == 0x3f80);     // high half
  }
  CHECK(got[9] == 0);
  CHECK(got[10] == 0);
}

TEST_CASE("cuda: copies between buffers and slices, overlapping ones too") {
  CUDA_DEVICE_OR_SKIP(dev);
  std::vector<int> host(1000);
  std::iota(host.begin(), host.end(), 0);
  auto a = dev.upload(host);
  auto b = dev.alloc<int>(1000);
  b.copy_from(a);
  CHECK(b.download() == host);
  b.slice(10, 100).copy_from(a.slice(500, 100));
  std::vector<int> want = host;
  std::copy(host.begin() + 500, host.begin() + 600, want.begin() + 10);
  CHECK(b.download() == want);
  a.slice(1, 500).copy_from(a.slice(0, 500));  // overlapping: memmove semantics
  std::vector<int> shifted = host;
  std::copy(host.begin(), host.begin() + 500, shifted.begin() + 1);
  CHECK(a.download() == shifted);
  auto s = a.slice(100, 10);
  s.upload(std::vector<int>(10, -7));
  CHECK(a.slice(95, 20).download()[5] == -7);
  CHECK(a.slice(95, 20).download()[4] == shifted[99]);
}

TEST_CASE("cuda: a buffer can wrap an external device pointer") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto owner = dev.upload(std::vector<float>{1, 2, 3, 4});
  tessera::Buffer<float> view(
      BufferBase::wrap(dev.impl(), owner.address() + 4, 8, tessera::ir::DType::f32));
  CHECK(view.download() == std::vector<float>{2, 3});
  view.fill(9.0f);
  CHECK(owner.download() == std::vector<float>{1, 9, 9, 4});
}

TEST_CASE("cuda: freed memory is reused by the cache") {
  CUDA_DEVICE_OR_SKIP(dev);
  uint64_t first = 0;
  {
    auto a = dev.alloc<float>(12345);
    first = a.address();
  }
  auto b = dev.alloc<float>(12345);
  CHECK(b.address() == first);
}

TEST_CASE("cuda: an allocation beyond the device's memory is OutOfMemory naming size and device") {
  CUDA_DEVICE_OR_SKIP(dev);
  auto [kind, what] = error_of([&] { dev.alloc<uint8_t>(size_t{1} << 50); });
  CHECK(kind == ErrorKind::OutOfMemory);
  CHECK(contains(what,
                 "cuda:0: cannot allocate 1125899906842624 bytes (cuMemAlloc failed: "
                 "CUDA_ERROR_OUT_OF_MEMORY (2)"));
  CHECK(dev.alloc<float>(10).size() == 10);  // and the device goes on
}

}  // namespace
}  // namespace cuda_test
