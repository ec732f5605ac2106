// \file Graph capture and replay on vulkan:0 (tests/runtime/graph_cases.h): the launches are
// recorded into one command buffer with the stream's barriers, and a replay is one submit.
#include <doctest/doctest.h>

#include <utility>

#include "runtime/vulkan/vk_test.h"
#include "../graph_cases.h"

namespace gc = graph_cases;
namespace tl = tessera::tl;
using tessera::Device;
using tessera::ErrorKind;
using tessera::test::error_of;

namespace {

/// Prints each program's id: its records are read back by the host after each submission.
void print_pid(tl::ptr<int32_t> a, int BLOCK) {
  auto pid = tl::program_id(0);
  tl::device_print("pid = ", {pid});
  auto offs = pid * BLOCK + tl::arange(0, BLOCK);
  tl::store(a + offs, tl::load(a + offs) + 1);
}

/// a[i] += 1 after asserting a[i] < limit (a fault channel: read back after each replay).
void checked_inc(tl::ptr<int32_t> a, tl::i32 limit, int BLOCK) {
  auto offs = tl::program_id(0) * BLOCK + tl::arange(0, BLOCK);
  auto v = tl::load(a + offs);
  tl::device_assert(v < limit, "v < limit");
  tl::store(a + offs, v + 1);
}

/// out[i] += a0 + ... + a31: a parameter block of over 264 bytes, more than the push constants of
/// any device (128 to 256 bytes), so it is passed by address.
void wide_sum(tl::ptr<int64_t> out, tl::i64 a0, tl::i64 a1, tl::i64 a2, tl::i64 a3, tl::i64 a4,
              tl::i64 a5, tl::i64 a6, tl::i64 a7, tl::i64 a8, tl::i64 a9, tl::i64 a10, tl::i64 a11,
              tl::i64 a12, tl::i64 a13, tl::i64 a14, tl::i64 a15, tl::i64 a16, tl::i64 a17,
              tl::i64 a18, tl::i64 a19, tl::i64 a20, tl::i64 a21, tl::i64 a22, tl::i64 a23,
              tl::i64 a24, tl::i64 a25, tl::i64 a26, tl::i64 a27, tl::i64 a28, tl::i64 a29,
              tl::i64 a30, tl::i64 a31, int BLOCK) {
  auto offs = tl::arange(0, BLOCK);
  tl::store(out + offs,
            tl::load(out + offs) + (a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 +
                                    a12 + a13 + a14 + a15 + a16 + a17 + a18 + a19 + a20 + a21 +
                                    a22 + a23 + a24 + a25 + a26 + a27 + a28 + a29 + a30 + a31));
}

/// The DeviceFault `f` throws ("<no error>" when none).
template <class F>
std::string fault_of(F&& f) {
  return error_of(std::forward<F>(f), ErrorKind::DeviceFault);
}

}  // namespace

TEST_CASE("vulkan graph: a device assert failing in a replay is a DeviceFault at the next wait") {
  VKTEST_DEVICE(dev);
  auto k = TESSERA_KERNEL(checked_inc, a, limit, BLOCK);
  auto a = dev.alloc<int32_t>(64);
  a.fill(0);
  tessera::Stream s = dev.create_stream();
  tessera::Graph g = s.capture([&] { k[{{4}, {}, &s}](a, 3, 16); });
  for (int i = 0; i < 3; ++i) g.replay(s);  // 0, 1, 2 pass
  CHECK(fault_of([&] { s.synchronize(); }) == "<no error>");
  CHECK(a.download() == std::vector<int32_t>(64, 3));
  g.replay(s);  // 3 < 3 fails everywhere; the launch still runs to its end
  std::string fault = fault_of([&] { s.synchronize(); });
  CHECK_MESSAGE(fault.find("device assert failed in kernel checked_inc at ") == 0, fault);
  CHECK_MESSAGE(fault.find(": v < limit (program (") != std::string::npos, fault);
  CHECK(fault_of([&] { s.synchronize(); }) == "<no error>");  // reported once
  g.replay(s);  // the graph's record was cleared: the next failure is reported again
  fault = fault_of([&] { s.synchronize(); });
  CHECK_MESSAGE(fault.find("device assert failed in kernel checked_inc at ") == 0, fault);
  CHECK(a.download() == std::vector<int32_t>(64, 5));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan graph: 3 dependent kernels replayed 5 times equal 15 eager launches") {
  VKTEST_DEVICE(dev);
  gc::replay_equals_eager(dev, 5);
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan graph: 200 replays of one graph, then eager launches after them") {
  VKTEST_DEVICE(dev);
  gc::replay_equals_eager(dev, 200);  // more than a batch's commands: replays are submissions
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE(
    "vulkan graph: a replay reads the buffers' current contents, and the graph holds its buffers") {
  VKTEST_DEVICE(dev);
  gc::replay_sees_new_contents(dev);
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan graph: transfers, events, nesting and other devices are errors naming them") {
  VKTEST_DEVICE(dev);
  gc::capture_errors(dev, Device::open("host"));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan graph: a kernel that prints cannot be captured, and the stream goes on") {
  VKTEST_DEVICE(dev);
  auto k = TESSERA_KERNEL(print_pid, a, BLOCK);
  auto a = dev.alloc<int32_t>(64);
  a.fill(0);
  tessera::Stream s = dev.create_stream();
  std::string e = error_of([&] { tessera::Graph g = s.capture([&] { k[{{1}, {}, &s}](a, 64); }); },
                           ErrorKind::Unsupported);
  CHECK_MESSAGE(e.find("kernel print_pid cannot be captured in a graph on " + dev.info().name +
                       ": it prints") == 0,
                e);
  CHECK(!s.impl()->capturing());
  CHECK(a.download() == std::vector<int32_t>(64, 0));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}

TEST_CASE("vulkan graph: a kernel whose parameters do not fit the push constants replays too") {
  VKTEST_DEVICE(dev);
  auto k = TESSERA_KERNEL(wide_sum, out, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13,
                          a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28,
                          a29, a30, a31, BLOCK);
  auto out = dev.alloc<int64_t>(16);
  out.fill(0);
  tessera::Stream s = dev.create_stream();
  int64_t sum = 0;
  for (int i = 0; i < 32; ++i) sum += int64_t{1} << i;
  tessera::Graph g = s.capture([&] {
    k[{{1}, {}, &s}](out, int64_t{1} << 0, int64_t{1} << 1, int64_t{1} << 2, int64_t{1} << 3,
                     int64_t{1} << 4, int64_t{1} << 5, int64_t{1} << 6, int64_t{1} << 7,
                     int64_t{1} << 8, int64_t{1} << 9, int64_t{1} << 10, int64_t{1} << 11,
                     int64_t{1} << 12, int64_t{1} << 13, int64_t{1} << 14, int64_t{1} << 15,
                     int64_t{1} << 16, int64_t{1} << 17, int64_t{1} << 18, int64_t{1} << 19,
                     int64_t{1} << 20, int64_t{1} << 21, int64_t{1} << 22, int64_t{1} << 23,
                     int64_t{1} << 24, int64_t{1} << 25, int64_t{1} << 26, int64_t{1} << 27,
                     int64_t{1} << 28, int64_t{1} << 29, int64_t{1} << 30, int64_t{1} << 31, 16);
  });
  for (int i = 0; i < 3; ++i) g.replay(s);
  // Eager launches between replays use the stream's parameter ring; the graph keeps its own block.
  k[{{1}, {}, &s}](out, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1},
                   int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1},
                   int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1},
                   int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1},
                   int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1}, int64_t{-1},
                   int64_t{-1}, int64_t{-1}, int64_t{-1}, 16);
  g.replay(s);
  CHECK(out.download() == std::vector<int64_t>(16, 4 * sum - 32));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
