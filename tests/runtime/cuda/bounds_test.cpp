/// \file Bounds checks on cuda:0 in debug mode (tests/runtime/bounds_cases.h); SKIPs without a GPU.
/// A failing lane traps, which resets the context (each case allocates after the fault).
#include "../bounds_cases.h"
#include "helpers.h"

namespace bc = bounds_cases;
using namespace cuda_test;

TEST_CASE("cuda bounds: an overrun into the neighbouring buffer is a fault") {
  CUDA_DEVICE_OR_SKIP(dev);
  bc::overrun_is_reported_and_stores_nothing(dev);
}

TEST_CASE("cuda bounds: an access below the buffer names its negative offset") {
  CUDA_DEVICE_OR_SKIP(dev);
  bc::underrun_names_a_negative_offset(dev);
}

TEST_CASE("cuda bounds: a slice ends where it ends") {
  CUDA_DEVICE_OR_SKIP(dev);
  bc::a_slice_ends_where_it_ends(dev);
}

TEST_CASE("cuda bounds: kernels that stay inside their buffers compute the same") {
  CUDA_DEVICE_OR_SKIP(dev);
  bc::checked_kernels_compute_the_same(dev);
}

TEST_CASE("cuda bounds: loops, selects and atomics are checked") {
  CUDA_DEVICE_OR_SKIP(dev);
  bc::loops_selects_and_atomics_are_checked(dev);
}
