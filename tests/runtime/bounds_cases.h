/// \file Debug mode's bounds checks (core/passes/bounds.h), shared by the host, Vulkan and CUDA
/// test binaries. Each case launches with `{.debug = true}` (the host and simt devices check
/// always), allocates its own buffers and causes at most one fault: on CUDA a fault leaves the
/// device unusable for the rest of the process (driver 580), so the CUDA binary runs each faulting
/// case in a child process. Which failing lane reports first is up to the device (GPUs run
/// programs in any order), so a case states the range of offsets that may be named.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "runtime/tessera.h"

namespace bounds_cases {

namespace tl = tessera::tl;
using tessera::Device;
using tessera::Error;
using tessera::ErrorKind;

constexpr tessera::LaunchOptions kDebug{.num_warps = 2, .debug = true};

/// out[i] = 1 for i < n.
inline void fill_ones(tl::ptr<float> out, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  tl::store(out + offs, tl::full({BLOCK}, 1.0f, tl::float32), offs < n);
}

/// out[i] = x[i + shift] for i < n.
inline void shifted_copy(tl::ptr<float> x, tl::ptr<float> out, tl::i32 n, tl::i32 shift,
                         int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(out + offs, tl::load(x + offs + shift, mask), mask);
}

/// out[0] = the sum of x[0 .. chunks * BLOCK), the pointer advanced in a loop.
inline void chunk_sum(tl::ptr<float> x, tl::ptr<float> out, tl::i32 chunks, int BLOCK) {
  auto p = x + tl::arange(0, BLOCK);
  auto acc = tl::zeros({BLOCK}, tl::float32);
  for (auto i : tl::range(0, chunks)) {
    (void)i;
    acc = acc + tl::load(p);
    p = p + BLOCK;
  }
  tl::store(out, tl::sum(acc, 0));
}

/// Lanes below `split` write through a, the rest through b (one pointer tile from two buffers).
inline void two_sources(tl::ptr<float> a, tl::ptr<float> b, tl::i32 n, tl::i32 split, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto p = tl::where(offs < split, a + offs, b + (offs - split));
  tl::store(p, tl::full({BLOCK}, 2.0f, tl::float32), offs < n);
}

/// counts[x[i]] += 1 for i < n.
inline void histogram(tl::ptr<int32_t> x, tl::ptr<int32_t> counts, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::atomic_add(counts + tl::load(x + offs, mask), 1, mask);
}

/// Runs `launch` (then synchronizes) and returns the DeviceFault's text; fails the test when
/// there is none or the error is of another kind.
inline std::string fault_of(const Device& dev, const std::function<void()>& launch) {
  try {
    launch();
    dev.synchronize();
  } catch (const Error& e) {
    CHECK_MESSAGE(e.kind() == ErrorKind::DeviceFault, e.what());
    return e.what();
  }
  FAIL_CHECK("no DeviceFault");
  return "";
}

/// Checks that `why` says "the pointer from `param` is at byte N of its buffer of `bytes` bytes"
/// with N in [lo, hi] and a multiple of 4.
inline void names_offset(const std::string& why, const std::string& param, int64_t lo, int64_t hi,
                         int64_t bytes) {
  const std::string head = "the pointer from `" + param + "` is at byte ";
  const size_t at = why.find(head);
  REQUIRE_MESSAGE(at != std::string::npos, why);
  char* end = nullptr;
  const long long n = std::strtoll(why.c_str() + at + head.size(), &end, 10);
  CHECK_MESSAGE((n >= lo && n <= hi && n % 4 == 0), why);
  CHECK_MESSAGE(
      std::string(end).rfind(" of its buffer of " + std::to_string(bytes) + " bytes", 0) == 0, why);
}

/// The probe: 1024 floats stored into a 256-float buffer. The fault names the access,
/// the kernel, its line, the parameter, the offset and the buffer's size; the neighbouring buffer
/// keeps its contents (the failing lanes do not store, even where the kernel runs on).
inline void overrun_is_reported_and_stores_nothing(const Device& dev) {
  auto small = dev.alloc<float>(256);
  auto next = dev.alloc<float>(256);
  small.fill(0.0f);
  next.fill(-1.0f);
  static auto k = TESSERA_KERNEL(fill_ones, out, n, BLOCK);
  std::string why = fault_of(dev, [&] { k[{{4}, kDebug}](small, 1024, 256); });
  CHECK_MESSAGE(why.find("out-of-bounds store in kernel") != std::string::npos, why);
  CHECK_MESSAGE(why.find("fill_ones") != std::string::npos, why);
  CHECK_MESSAGE(why.find("bounds_cases.h:") != std::string::npos, why);
  names_offset(why, "out", 1024, 4092, 1024);
  if (dev.info().kind == "cuda") return;  // the trap ended the kernel, and the device with it
  for (float v : next.download()) REQUIRE(v == -1.0f);
  for (float v : small.download()) REQUIRE(v == 1.0f);
}

/// An access below the buffer: a negative offset.
inline void underrun_names_a_negative_offset(const Device& dev) {
  auto x = dev.upload(std::vector<float>(64, 3.0f));
  auto out = dev.alloc<float>(64);
  static auto k = TESSERA_KERNEL(shifted_copy, x, out, n, shift, BLOCK);
  std::string why = fault_of(dev, [&] { k[{{1}, kDebug}](x, out, 64, -1, 64); });
  CHECK_MESSAGE(why.find("out-of-bounds load") != std::string::npos, why);
  names_offset(why, "x", -4, -4, 256);
}

/// A slice's end is its buffer's end, though the allocation goes on.
inline void a_slice_ends_where_it_ends(const Device& dev) {
  auto whole = dev.upload(std::vector<float>(256, 5.0f));
  auto out = dev.alloc<float>(128);
  static auto k = TESSERA_KERNEL(shifted_copy, x, out, n, shift, BLOCK);
  std::string why = fault_of(dev, [&] { k[{{1}, kDebug}](whole.slice(0, 100), out, 101, 0, 128); });
  names_offset(why, "x", 400, 400, 400);
}

/// What stays inside its buffers runs as without the checks: masked lanes that point far away,
/// a pointer advanced in a loop, a pointer tile from two buffers, atomics.
inline void checked_kernels_compute_the_same(const Device& dev) {
  std::vector<float> xs(64);
  for (int i = 0; i < 64; ++i) xs[i] = static_cast<float>(i);
  auto x = dev.upload(xs);
  auto out = dev.alloc<float>(64);
  static auto copy = TESSERA_KERNEL(shifted_copy, x, out, n, shift, BLOCK);
  copy[{{1}, kDebug}](x, out, 60, 4, 64);  // lanes 60..63 would read past the end: masked off
  auto got = out.download();
  for (int i = 0; i < 60; ++i) REQUIRE(got[i] == xs[i + 4]);

  static auto sum = TESSERA_KERNEL(chunk_sum, x, out, chunks, BLOCK);
  sum[{{1}, kDebug}](x, out, 4, 16);
  CHECK(out.download()[0] == 2016.0f);  // 0 + 1 + ... + 63

  auto a = dev.alloc<float>(32), b = dev.alloc<float>(32);
  a.fill(0.0f);
  b.fill(0.0f);
  static auto two = TESSERA_KERNEL(two_sources, a, b, n, split, BLOCK);
  two[{{1}, kDebug}](a, b, 64, 32, 64);
  for (float v : a.download()) REQUIRE(v == 2.0f);
  for (float v : b.download()) REQUIRE(v == 2.0f);

  std::vector<int32_t> keys = {0, 1, 1, 3, 3, 3, 2, 0};
  auto kx = dev.upload(keys);
  auto counts = dev.alloc<int32_t>(4);
  counts.fill(0);
  static auto hist = TESSERA_KERNEL(histogram, x, counts, n, BLOCK);
  hist[{{1}, kDebug}](kx, counts, 8, 8);
  CHECK(counts.download() == std::vector<int32_t>{2, 2, 1, 3});
}

/// The pointer advanced once too often in a loop.
inline void a_loop_carried_pointer_is_checked(const Device& dev) {
  auto x = dev.upload(std::vector<float>(64, 1.0f));
  auto out = dev.alloc<float>(1);
  static auto sum = TESSERA_KERNEL(chunk_sum, x, out, chunks, BLOCK);
  std::string why = fault_of(dev, [&] { sum[{{1}, kDebug}](x, out, 5, 16); });
  names_offset(why, "x", 256, 316, 256);
}

/// A pointer tile from two buffers that leaves both.
inline void a_pointer_from_two_buffers_is_checked(const Device& dev) {
  auto a = dev.alloc<float>(32), b = dev.alloc<float>(32);
  static auto two = TESSERA_KERNEL(two_sources, a, b, n, split, BLOCK);
  std::string why = fault_of(dev, [&] { two[{{1}, kDebug}](a, b, 64, 16, 64); });
  CHECK_MESSAGE(why.find("the pointer (from `a` or `b`) is outside all of their buffers") !=
                    std::string::npos,
                why);
}

/// An atomic on a key past the end.
inline void an_atomic_is_checked(const Device& dev) {
  auto kx = dev.upload(std::vector<int32_t>{0, 1, 4, 2});
  auto counts = dev.alloc<int32_t>(4);
  counts.fill(0);
  static auto hist = TESSERA_KERNEL(histogram, x, counts, n, BLOCK);
  std::string why = fault_of(dev, [&] { hist[{{1}, kDebug}](kx, counts, 4, 4); });
  CHECK_MESSAGE(why.find("out-of-bounds atomic") != std::string::npos, why);
  names_offset(why, "counts", 16, 16, 16);
}

}  // namespace bounds_cases
