// \file Bounds checks on the interpreters (tests/runtime/bounds_cases.h): host and simt check
// every access against its pointer's own buffer always, not only in debug mode.
#include <doctest/doctest.h>

#include "../bounds_cases.h"

namespace bc = bounds_cases;
using tessera::Device;

namespace {
const char* const kDevices[] = {"host", "simt:32", "simt:8"};
}

TEST_CASE(
    "bounds: an overrun into the neighbouring buffer is a fault and stores nothing (host, simt)") {
  for (const char* name : kDevices) {
    CAPTURE(std::string(name));
    bc::overrun_is_reported_and_stores_nothing(Device::open(name));
  }
}

TEST_CASE("bounds: an access below the buffer names its negative offset (host, simt)") {
  for (const char* name : kDevices) {
    CAPTURE(std::string(name));
    bc::underrun_names_a_negative_offset(Device::open(name));
  }
}

TEST_CASE("bounds: a slice ends where it ends (host, simt)") {
  for (const char* name : kDevices) {
    CAPTURE(std::string(name));
    bc::a_slice_ends_where_it_ends(Device::open(name));
  }
}

TEST_CASE("bounds: kernels that stay inside their buffers compute the same (host, simt)") {
  for (const char* name : kDevices) {
    CAPTURE(std::string(name));
    bc::checked_kernels_compute_the_same(Device::open(name));
  }
}

TEST_CASE("bounds: loops, selects and atomics are checked (host, simt)") {
  for (const char* name : kDevices) {
    CAPTURE(std::string(name));
    bc::a_loop_carried_pointer_is_checked(Device::open(name));
    bc::a_pointer_from_two_buffers_is_checked(Device::open(name));
    bc::an_atomic_is_checked(Device::open(name));
  }
}

TEST_CASE("bounds: the interpreters check without being asked") {
  auto dev = Device::open("host");
  auto small = dev.alloc<float>(16);
  auto next = dev.alloc<float>(16);
  static auto k = TESSERA_KERNEL(bc::fill_ones, out, n, BLOCK);
  try {
    k[{{1}}](small, 32, 32);  // no debug option
    dev.synchronize();
    FAIL("no fault");
  } catch (const tessera::Error& e) {
    CHECK(std::string(e.what()).find("is at byte 64 of its buffer of 64 bytes") !=
          std::string::npos);
  }
}
