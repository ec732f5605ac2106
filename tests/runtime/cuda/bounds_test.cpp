/// \file Bounds checks on cuda:0 in debug mode (tests/runtime/bounds_cases.h); SKIPs without a GPU.
/// A failing lane traps, and the driver keeps the fault for the process: each faulting case runs
/// in a child process (ran_in_child).
#include "../bounds_cases.h"
#include "helpers.h"

namespace bc = bounds_cases;
using namespace cuda_test;

TEST_CASE("cuda bounds: an overrun into the neighbouring buffer is a fault") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda bounds: an overrun into the neighbouring buffer is a fault")) return;
  bc::overrun_is_reported_and_stores_nothing(dev);
}

TEST_CASE("cuda bounds: an access below the buffer names its negative offset") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda bounds: an access below the buffer names its negative offset")) return;
  bc::underrun_names_a_negative_offset(dev);
}

TEST_CASE("cuda bounds: a slice ends where it ends") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda bounds: a slice ends where it ends")) return;
  bc::a_slice_ends_where_it_ends(dev);
}

TEST_CASE("cuda bounds: kernels that stay inside their buffers compute the same") {
  CUDA_DEVICE_OR_SKIP(dev);
  bc::checked_kernels_compute_the_same(dev);
}

TEST_CASE("cuda bounds: a loop-carried pointer is checked") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda bounds: a loop-carried pointer is checked")) return;
  bc::a_loop_carried_pointer_is_checked(dev);
}

TEST_CASE("cuda bounds: a pointer from two buffers is checked") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda bounds: a pointer from two buffers is checked")) return;
  bc::a_pointer_from_two_buffers_is_checked(dev);
}

TEST_CASE("cuda bounds: an atomic is checked") {
  CUDA_DEVICE_OR_SKIP(dev);
  if (ran_in_child("cuda bounds: an atomic is checked")) return;
  bc::an_atomic_is_checked(dev);
}
