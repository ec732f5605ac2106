// \file Bounds checks on vulkan:0 in debug mode (tests/runtime/bounds_cases.h). Vulkan kernels
// cannot stop: a failing lane reports through the fault channel and skips its access.
#include <doctest/doctest.h>

#include "../bounds_cases.h"
#include "vk_test.h"

namespace bc = bounds_cases;

#define VK_BOUNDS_CASE(name, fn)                  \
  TEST_CASE("vulkan bounds: " name) {             \
    auto dev = vktest::device();                  \
    if (!dev) {                                   \
      vktest::report_skip(vktest::skip_reason()); \
      return;                                     \
    }                                             \
    bc::fn(*dev);                                 \
  }

VK_BOUNDS_CASE("an overrun into the neighbouring buffer is a fault and stores nothing",
               overrun_is_reported_and_stores_nothing)
VK_BOUNDS_CASE("an access below the buffer names its negative offset",
               underrun_names_a_negative_offset)
VK_BOUNDS_CASE("a slice ends where it ends", a_slice_ends_where_it_ends)
VK_BOUNDS_CASE("kernels that stay inside their buffers compute the same",
               checked_kernels_compute_the_same)
VK_BOUNDS_CASE("a loop-carried pointer is checked", a_loop_carried_pointer_is_checked)
VK_BOUNDS_CASE("a pointer from two buffers is checked", a_pointer_from_two_buffers_is_checked)
VK_BOUNDS_CASE("an atomic is checked", an_atomic_is_checked)

TEST_CASE("vulkan bounds: without debug mode nothing is checked (the overrun lands)") {
  auto dev = vktest::device();
  if (!dev) {
    vktest::report_skip(vktest::skip_reason());
    return;
  }
  auto small = dev->alloc<float>(256);
  small.fill(0.0f);
  static auto k = TESSERA_KERNEL(bc::fill_ones, out, n, BLOCK);
  k[{{1}}](small, 256, 256);  // in bounds, no debug: no fault channel, the plain kernel
  for (float v : small.download()) REQUIRE(v == 1.0f);
}
