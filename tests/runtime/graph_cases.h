/// \file Graph capture and replay (tessera::Graph, Stream::capture), shared by the host, Vulkan
/// and CUDA test binaries, each running them on its devices: a replay equals the eager launches,
/// it reads the buffers' current contents, and what cannot be captured is an error naming it.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/tessera.h"
#include "tests/support/errors.h"

namespace graph_cases {

namespace tl = tessera::tl;
using tessera::Buffer;
using tessera::Device;
using tessera::ErrorKind;
using tessera::Graph;
using tessera::Stream;
using tessera::test::error_of;

constexpr int kBlock = 64;
constexpr int kN = 200;  // four programs, the last one masked

/// a[i] += 1.
inline void inc_i32(tl::ptr<int32_t> a, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(a + offs, tl::load(a + offs, mask) + 1, mask);
}

/// b[i] = b[i] * 3 + a[i] (wrapping): reads what the previous kernel wrote.
inline void mix_i32(tl::ptr<int32_t> a, tl::ptr<int32_t> b, tl::i32 n, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto mask = offs < n;
  tl::store(b + offs, tl::load(b + offs, mask) * 3 + tl::load(a + offs, mask), mask);
}

/// The three dependent launches: a += 1; b = 3b + a; c = 3c + b.
struct Chain {
  decltype(TESSERA_KERNEL(inc_i32, a, n, BLOCK)) inc = TESSERA_KERNEL(inc_i32, a, n, BLOCK);
  decltype(TESSERA_KERNEL(mix_i32, a, b, n, BLOCK)) mix = TESSERA_KERNEL(mix_i32, a, b, n, BLOCK);

  void launch(const Buffer<int32_t>& a, const Buffer<int32_t>& b, const Buffer<int32_t>& c,
              const Stream* s) const {
    const tessera::Grid grid(tessera::cdiv(kN, kBlock));
    inc[{grid, {}, s}](a, kN, kBlock);
    mix[{grid, {}, s}](a, b, kN, kBlock);
    mix[{grid, {}, s}](b, c, kN, kBlock);
  }
};

/// The chain run `times` times on the host (wrapping like the device).
inline void reference(std::vector<int32_t>& a, std::vector<int32_t>& b, std::vector<int32_t>& c,
                      int times) {
  for (int t = 0; t < times; ++t)
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<int32_t>(static_cast<uint32_t>(a[i]) + 1u);
      b[i] = static_cast<int32_t>(static_cast<uint32_t>(b[i]) * 3u + static_cast<uint32_t>(a[i]));
      c[i] = static_cast<int32_t>(static_cast<uint32_t>(c[i]) * 3u + static_cast<uint32_t>(b[i]));
    }
}

inline std::vector<int32_t> pattern(int32_t seed) {
  std::vector<int32_t> v(kN);
  for (int i = 0; i < kN; ++i) v[i] = seed + i * 7 - (i % 5) * 1000;
  return v;
}

/// A graph of the three dependent kernels replayed `replays` times leaves what 3 x replays eager
/// launches leave (and the host reference).
inline void replay_equals_eager(const Device& dev, int replays) {
  Chain chain;
  auto a0 = pattern(1), b0 = pattern(-50), c0 = pattern(9);
  auto ea = dev.alloc<int32_t>(kN), eb = dev.alloc<int32_t>(kN), ec = dev.alloc<int32_t>(kN);
  auto ga = dev.alloc<int32_t>(kN), gb = dev.alloc<int32_t>(kN), gc = dev.alloc<int32_t>(kN);
  ea.upload(a0), eb.upload(b0), ec.upload(c0);
  ga.upload(a0), gb.upload(b0), gc.upload(c0);
  for (int r = 0; r < replays; ++r) chain.launch(ea, eb, ec, nullptr);

  Stream s = dev.create_stream();
  Graph g = s.capture([&] { chain.launch(ga, gb, gc, &s); });
  CHECK(g.launches() == 3);
  // Nothing ran during the capture.
  CHECK(ga.download() == a0);
  for (int r = 0; r < replays; ++r) g.replay(s);
  s.synchronize();

  auto ra = a0, rb = b0, rc = c0;
  reference(ra, rb, rc, replays);
  CHECK(ea.download() == ra);
  CHECK(eb.download() == rb);
  CHECK(ec.download() == rc);
  CHECK(ga.download() == ra);
  CHECK(gb.download() == rb);
  CHECK(gc.download() == rc);
}

/// A replay reads the buffers' contents at its time: data copied in (on the default stream)
/// between replays is what the next replay uses. A buffer only the graph still holds stays alive.
inline void replay_sees_new_contents(const Device& dev) {
  Chain chain;
  auto a = dev.alloc<int32_t>(kN), c = dev.alloc<int32_t>(kN);
  auto src = dev.alloc<int32_t>(kN);
  Stream s = dev.create_stream();
  Graph g;
  {
    auto b = dev.alloc<int32_t>(kN);  // dropped after the capture: the graph holds its memory
    b.upload(pattern(3));
    a.upload(pattern(0));
    c.upload(pattern(0));
    g = s.capture([&] { chain.launch(a, b, c, &s); });
  }
  g.replay(s);
  auto ra = pattern(0), rb = pattern(3), rc = pattern(0);
  reference(ra, rb, rc, 1);
  CHECK(a.download() == ra);  // ordered after the replay by the default-stream rule
  CHECK(c.download() == rc);

  src.upload(pattern(500));
  a.copy_from(src);  // new contents, same buffer
  c.upload(pattern(-7));
  g.replay(s);
  ra = pattern(500);
  rc = pattern(-7);
  reference(ra, rb, rc, 1);
  CHECK(a.download() == ra);
  CHECK(c.download() == rc);
}

/// What cannot be captured or replayed is an Argument error naming it; the stream stays usable.
inline void capture_errors(const Device& dev, const Device& other) {
  Chain chain;
  auto a = dev.alloc<int32_t>(kN), b = dev.alloc<int32_t>(kN), c = dev.alloc<int32_t>(kN);
  a.upload(pattern(0)), b.upload(pattern(0)), c.upload(pattern(0));
  Stream s = dev.create_stream();
  const std::string name = dev.info().name;

  std::string e = error_of([&] { dev.default_stream().begin_capture(); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("default stream") != std::string::npos, e);
  e = error_of([&] { s.end_capture(); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("not capturing") != std::string::npos, e);

  s.begin_capture();
  e = error_of([&] { s.begin_capture(); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("do not nest") != std::string::npos, e);
  e = error_of([&] { a.upload(pattern(1), &s); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("upload on " + name + ": the stream is capturing a graph") == 0, e);
  e = error_of([&] { (void)a.download(&s); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("download on " + name) == 0, e);
  e = error_of([&] { b.fill(5, &s); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("fill on " + name) == 0, e);
  e = error_of([&] { b.copy_from(a, &s); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("copy on " + name) == 0, e);
  e = error_of([&] { dev.create_event().record(s); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("event record on " + name) == 0, e);
  e = error_of([&] { s.synchronize(); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("synchronize on " + name) == 0, e);
  dev.synchronize();  // the device's other work; the capture goes on
  chain.launch(a, b, c, &s);
  Graph g = s.end_capture();
  CHECK(g.launches() == 3);
  e = error_of([&] { Graph inner = s.capture([&] { g.replay(s); }); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("a replay cannot be captured") != std::string::npos, e);
  CHECK(!s.impl()->capturing());  // the throwing body dropped the capture

  // Another device's stream.
  e = error_of([&] { g.replay(other.create_stream()); }, ErrorKind::Argument);
  CHECK_MESSAGE(
      e.find("captured on " + name + " on a stream of " + other.info().name) != std::string::npos,
      e);
  e = error_of([&] { Graph().replay(s); }, ErrorKind::Argument);
  CHECK_MESSAGE(e.find("empty graph") != std::string::npos, e);

  // A body that throws something else: the capture is dropped, the launches after it run.
  CHECK_THROWS_AS(s.capture([&] {
    chain.launch(a, b, c, &s);
    throw std::runtime_error("body failed");
  }),
                  std::runtime_error);
  CHECK(!s.impl()->capturing());
  chain.launch(a, b, c, &s);  // eager again
  g.replay(s);
  s.synchronize();
  auto ra = pattern(0), rb = pattern(0), rc = pattern(0);
  reference(ra, rb, rc, 2);  // one eager chain and one replay; the captured ones never ran
  CHECK(a.download() == ra);
  CHECK(c.download() == rc);
}

}  // namespace graph_cases
