/// \file The cross-stream ordering cases (runtime/ordering.h, docs/design.md "Ordering"), shared by
/// the host, Vulkan and CUDA test binaries, each running them on its devices. A "spin" kernel
/// keeps one stream busy (a data-dependent loop no compiler can shorten) before it reads or writes,
/// so that work the rule did not order would overtake it and see stale or unfinished data; the
/// checks hold whatever the timing once the order is kept.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "runtime/tessera.h"

namespace ordering_cases {

namespace tl = tessera::tl;

/// Steps of the inner loop of spin_add.
constexpr int kInner = 64;

/// dst[i] = src[i] + lcg^(iters * kInner)(i): steps of a linear congruential generator (wrapping
/// i32), then the copy. The loops' result feeds the store, so they cannot be dropped or folded.
inline void spin_add(tl::ptr<int32_t> src, tl::ptr<int32_t> dst, tl::i32 n, tl::i32 iters,
                     int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  auto acc = offs;
  for (auto i : tl::range(0, iters)) {
    (void)i;
    for (auto j : tl::range(0, kInner)) {
      (void)j;
      acc = acc * 1664525 + 1013904223;
    }
  }
  tl::store(dst + offs, tl::load(src + offs, mask) + acc, mask);
}

/// dst[i] = src[i].
inline void copy_i32(tl::ptr<int32_t> src, tl::ptr<int32_t> dst, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(dst + offs, tl::load(src + offs, mask), mask);
}

constexpr int kBlock = 64;
constexpr int kN = 256;  // four programs

/// What spin_add leaves in dst[i] for src[i] (wrapping like the device).
inline int32_t spun(int32_t src, int32_t i, int iters) {
  uint32_t acc = static_cast<uint32_t>(i);
  for (int k = 0; k < iters * kInner; ++k) acc = acc * 1664525u + 1013904223u;
  return static_cast<int32_t>(static_cast<uint32_t>(src) + acc);
}

/// A pattern that no earlier call left in memory the allocator hands out again (the count
/// differs between calls, so a stale read never matches by chance).
inline std::vector<int32_t> pattern(int32_t seed) {
  static std::atomic<int32_t> calls{0};
  const int32_t salt = calls.fetch_add(1) * 1000003 + seed * 100003;
  std::vector<int32_t> v(kN);
  for (int i = 0; i < kN; ++i) v[i] = salt + i * 7;
  return v;
}

inline std::vector<int32_t> spun(const std::vector<int32_t>& src, int iters) {
  std::vector<int32_t> out(src.size());
  for (size_t i = 0; i < src.size(); ++i) out[i] = spun(src[i], static_cast<int32_t>(i), iters);
  return out;
}

inline const auto& spin_kernel() {
  static auto k = TESSERA_KERNEL(spin_add, src, dst, n, iters, BLOCK);
  return k;
}
inline const auto& copy_kernel() {
  static auto k = TESSERA_KERNEL(copy_i32, src, dst, n, BLOCK);
  return k;
}

/// Launches spin_add on `stream` (the default stream when null).
inline void spin(const tessera::Buffer<int32_t>& src, const tessera::Buffer<int32_t>& dst,
                 int iters, const tessera::Stream* stream = nullptr) {
  spin_kernel()[{{tessera::cdiv(kN, kBlock)}, {.num_warps = 2}, stream}](src, dst, kN, iters,
                                                                         kBlock);
}

inline void copy(const tessera::Buffer<int32_t>& src, const tessera::Buffer<int32_t>& dst,
                 const tessera::Stream* stream = nullptr) {
  copy_kernel()[{{tessera::cdiv(kN, kBlock)}, {.num_warps = 2}, stream}](src, dst, kN, kBlock);
}

/// Compiles both kernels for `dev` ahead of a case, so that no compile in the middle of a case
/// gives a busy stream the time to finish.
inline void warm_up(const tessera::Device& dev) {
  auto a = dev.alloc<int32_t>(kN), b = dev.alloc<int32_t>(kN);
  a.fill(0);
  spin(a, b, 1);
  copy(b, a);
  dev.synchronize();
}

/// The first probe: `dev.upload(x)` (the default stream, kept busy before it) and then a
/// launch on a created stream that reads x must see the uploaded data.
inline void upload_then_launch_on_another_stream(const tessera::Device& dev, int iters) {
  warm_up(dev);
  tessera::Stream s = dev.create_stream();
  auto busy_in = dev.alloc<int32_t>(kN), busy_out = dev.alloc<int32_t>(kN);
  busy_in.fill(0);
  spin(busy_in, busy_out, iters);  // the default stream is busy ...
  const auto data = pattern(11);
  auto x = dev.upload(data);  // ... so the upload waits behind it
  auto y = dev.alloc<int32_t>(kN);
  copy(x, y, &s);
  CHECK(y.download(&s) == data);
  CHECK(busy_out.download(&s) == spun(std::vector<int32_t>(kN, 0), iters));
}

/// The second probe: a launch on a created stream followed by `download()` (the default
/// stream) returns the finished data.
inline void launch_on_another_stream_then_download(const tessera::Device& dev, int iters) {
  warm_up(dev);
  tessera::Stream s = dev.create_stream();
  const auto data = pattern(12);
  auto x = dev.upload(data);
  auto y = dev.alloc<int32_t>(kN);
  y.fill(-1);
  spin(x, y, iters, &s);
  CHECK(y.download() == spun(data, iters));
}

/// Transfers given a created stream stay in that stream's order (a later upload does not overtake
/// a kernel still to read the buffer), are ordered after earlier default-stream work, and the
/// default stream's later work (a download, a launch) is ordered after them.
inline void explicit_stream_transfers_keep_their_stream_order(const tessera::Device& dev,
                                                              int iters) {
  warm_up(dev);
  tessera::Stream s = dev.create_stream();
  const auto a = pattern(21), b = pattern(22);
  auto x = dev.alloc<int32_t>(kN), y = dev.alloc<int32_t>(kN), z = dev.alloc<int32_t>(kN);
  x.upload(a, &s);
  spin(x, y, iters, &s);  // reads x only after spinning
  x.upload(b, &s);        // must not land before that read
  CHECK(y.download(&s) == spun(a, iters));
  CHECK(x.download(&s) == b);

  // Default-stream work (the default stream passed by name), then a copy and a fill on the
  // created stream.
  auto w = dev.alloc<int32_t>(kN);
  tessera::Stream d = dev.default_stream();
  spin(x, w, iters, &d);  // w = spun(b)
  z.copy_from(w, &s);
  CHECK(z.download(&s) == spun(b, iters));
  spin(z, w, iters, &s);
  z.fill(5, &s);  // after the spin on s has read z
  CHECK(w.download() == spun(spun(b, iters), iters));
  CHECK(z.download() == std::vector<int32_t>(kN, 5));

  // An upload on the created stream, then a launch on the default stream reads it.
  auto c = pattern(23);
  x.upload(c, &s);
  copy(x, y);
  CHECK(y.download() == c);
}

/// An event recorded on the default stream after work on a created stream marks the end of that
/// work too, so a second stream that waits for it sees the work done.
inline void event_on_default_stream_follows_other_streams(const tessera::Device& dev, int iters) {
  warm_up(dev);
  tessera::Stream s1 = dev.create_stream(), s2 = dev.create_stream();
  const auto data = pattern(31);
  auto x = dev.upload(data);
  auto y = dev.alloc<int32_t>(kN);
  y.fill(-1);
  dev.synchronize();
  spin(x, y, iters, &s1);
  tessera::Event done = dev.create_event();
  done.record(dev.default_stream());
  done.wait_in(s2);
  CHECK(y.download(&s2) == spun(data, iters));
}

/// A created stream that went away (its work finished in its destructor) is skipped by later
/// joins; a stream created afterwards, here straight from the backend so that the order learns
/// what it is at its first use, is ordered like any other.
inline void streams_that_went_away(const tessera::Device& dev, int iters) {
  warm_up(dev);
  const auto data = pattern(41);
  auto x = dev.upload(data);
  auto y = dev.alloc<int32_t>(kN);
  {
    tessera::Stream gone = dev.create_stream();
    spin(x, y, iters, &gone);
  }
  CHECK(y.download() == spun(data, iters));
  tessera::Stream later(dev.impl()->create_stream());
  auto w = dev.alloc<int32_t>(kN);
  spin(x, w, iters);  // the default stream is busy before the fill
  y.fill(3);
  copy(y, x, &later);
  CHECK(x.download() == std::vector<int32_t>(kN, 3));
  CHECK(w.download() == spun(data, iters));
}

/// Streams used from several threads at once, with the default stream used by others: each
/// thread's chain (upload, launch, download) on its stream or on the default stream is ordered.
inline void threads_share_the_order(const tessera::Device& dev, int rounds) {
  warm_up(dev);
  constexpr int kThreads = 4;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        tessera::Stream own = dev.create_stream();
        tessera::Stream* s = t % 2 ? &own : nullptr;  // odd: created, even: default
        for (int r = 0; r < rounds; ++r) {
          const auto data = pattern(t);
          auto x = dev.alloc<int32_t>(kN), y = dev.alloc<int32_t>(kN);
          x.upload(data, s);
          copy(x, y, s);
          // Every other round reads back through the other kind of stream.
          tessera::Stream* back = r % 2 == 0 ? s : (s ? nullptr : &own);
          if (y.download(back) != data) ++wrong;
        }
      } catch (const std::exception& e) {
        MESSAGE("thread " << t << ": " << e.what());
        ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong.load() == 0);
}

}  // namespace ordering_cases
