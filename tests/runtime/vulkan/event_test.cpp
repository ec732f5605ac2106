// \file Events: device timestamps around work, elapsed time, and misuse.
#include "vk_test.h"

using tessera::Buffer;

TEST_CASE("vulkan: elapsed time between two events around work is positive") {
  VKTEST_DEVICE(dev);
  auto& vk = vktest::impl(dev);
  if (vk.facts().timestamp_valid_bits == 0) {
    vktest::report_skip("the queue of " + dev.name() + " has no timestamps");
    return;
  }
  tessera::Stream s = dev.default_stream();
  tessera::Event start = dev.create_event(), stop = dev.create_event();
  Buffer<float> a = dev.alloc<float>(1 << 18), b = dev.alloc<float>(1 << 18);
  start.record(s);
  for (int i = 0; i < 8; ++i) {
    a.fill(static_cast<float>(i), &s);
    b.copy_from(a, &s);
  }
  stop.record(s);
  double ms = stop.elapsed_since(start);
  CHECK(ms > 0.0);
  CHECK(ms < 60000.0);
  CHECK(b.download()[12345] == 7.0f);
  // Recording again moves the event: the new interval is measured.
  start.record(s);
  a.fill(1.0f, &s);
  stop.record(s);
  double again = stop.elapsed_since(start);
  CHECK(again > 0.0);
  // Two events at the same point of the stream: zero or a tiny interval, never negative.
  start.record(s);
  stop.record(s);
  CHECK(stop.elapsed_since(start) >= 0.0);
  vktest::expect_no_validation_messages(vk);
}

TEST_CASE("vulkan: the elapsed time of an event never recorded is an argument error") {
  VKTEST_DEVICE(dev);
  tessera::Event a = dev.create_event(), b = dev.create_event();
  a.record(dev.default_stream());
  try {
    b.elapsed_since(a);
    FAIL("an unrecorded event has no time");
  } catch (const tessera::Error& e) {
    CHECK(e.kind() == tessera::ErrorKind::Argument);
    CHECK(std::string(e.what()).find("never recorded") != std::string::npos);
  }
}

TEST_CASE("vulkan: many events reuse query slots") {
  VKTEST_DEVICE(dev);
  tessera::Stream s = dev.default_stream();
  for (int round = 0; round < 3; ++round) {
    std::vector<tessera::Event> events;
    for (int i = 0; i < 300; ++i) {  // more than one query pool
      events.push_back(dev.create_event());
      events.back().record(s);
    }
    if (vktest::impl(dev).facts().timestamp_valid_bits)
      CHECK(events.back().elapsed_since(events.front()) >= 0.0);
    s.synchronize();
  }
  vktest::expect_no_validation_messages(vktest::impl(dev));
}
