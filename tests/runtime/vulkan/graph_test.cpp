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

TEST_CASE("vulkan graph: a replay reads the buffers' current contents; the graph holds its buffers") {
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
  std::string e = error_of(
      [&] {
        tessera::Graph g = s.capture([&] { k[{{1}, {}, &s}](a, 64); });
      },
      ErrorKind::Unsupported);
  CHECK_MESSAGE(e.find("kernel print_pid cannot be captured in a graph on " + dev.info().name +
                       ": it prints") == 0,
                e);
  CHECK(!s.impl()->capturing());
  CHECK(a.download() == std::vector<int32_t>(64, 0));
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
